"""``skonline`` (or ``python -m skonline``): the command line of skonline (:mod:`skonline.cli`).

Commands:

``skonline tour`` (the default)
    Runs every family of online learners on the public benchmark datasets found in the data home
    (``--data-home``, else ``$SKONLINE_DATA``, else ``~/skonline_data``; nothing is downloaded),
    on small synthetic data for each dataset that is missing, one prequential pass per learner.
    Prints one results table against the scikit-learn baseline a user would pick instead, and
    writes plots into ``--output-dir``.

``skonline reproduce <family> [args ...]``
    Runs a family's paper-reproduction benchmark, ``benchmarks/<family>.py`` of the repository
    that holds the imported package (or of the clone named by ``--repo``), forwarding the extra
    arguments (e.g. ``--quick``). Only the repository's own benchmarks of the known families run;
    the current directory is never searched for scripts.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

COMMANDS = ("tour", "reproduce")
BENCHMARK_FAMILIES = ("linear_model", "experts", "kernel_selection", "kernel_ridge", "dro")


def _families(text):
    from ._tour import FAMILIES

    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in FAMILIES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown famil{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown) or '(none)'}; "
            f"choose among {','.join(FAMILIES)}"
        )
    return [f for f in FAMILIES if f in names]  # in the tour's order


def _parser():
    parser = argparse.ArgumentParser(
        prog="skonline",
        description="skonline: online learners from the research literature as scikit-learn "
        "estimators.",
        epilog="Without a command, 'skonline' runs 'skonline tour'. "
        "'skonline <command> --help' describes a command.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"skonline {__version__}")
    sub = parser.add_subparsers(dest="command", title="commands", metavar="{tour,reproduce}")

    tour = sub.add_parser(
        "tour",
        help="run every family on the datasets in the data home (synthetic stand-ins for the "
        "missing ones); print one table, write plots (default command)",
        description="Run every family of online learners, one prequential pass per learner, on "
        "the public datasets found in the data home (never downloaded: small synthetic data, "
        "fixed seed, for each dataset that is missing). Prints one results table with the "
        "scikit-learn baseline a user would pick instead, and writes plots.",
    )
    tour.add_argument("--data-home", default=None,
                      help="folder with the dataset .npz files (default: $SKONLINE_DATA, else "
                      "~/skonline_data)")
    tour.add_argument("--output-dir", default="skonline_tour",
                      help="where the plots and the table go (default: ./skonline_tour)")
    tour.add_argument("--quick", action="store_true",
                      help="tiny synthetic data only (seconds; for a smoke test)")
    tour.add_argument("--no-progress", action="store_true",
                      help="no progress bar on stderr (it is off anyway when stderr is not a "
                      "terminal)")
    tour.add_argument("--families", type=_families, default=None,
                      help="comma-separated subset of linear_model,experts,kernel_selection,"
                      "kernel_ridge,dro (default: all)")

    rep = sub.add_parser(
        "reproduce",
        help="run a family's paper-reproduction benchmark (benchmarks/<family>.py of a clone "
        "of the repository)",
        description="Run benchmarks/<family>.py, the reproduction of the family's paper, from the "
        "clone of the repository that holds the imported package (an editable install), or the "
        "clone given with --repo. Arguments after the family are passed to the script, e.g. "
        "'skonline reproduce experts --quick'; 'skonline reproduce <family> --help' shows the "
        "script's own options. The results go to benchmarks/results/<family>.md.",
    )
    rep.add_argument("--dry-run", action="store_true",
                     help="print the script found and the command, do not run it")
    rep.add_argument("--repo", default=None,
                     help="a clone of the skonline repository whose benchmark to run (default: "
                     "the repository of the imported package; the current directory is not "
                     "searched)")
    rep.add_argument("family", help=f"one of {', '.join(BENCHMARK_FAMILIES)}")
    rep.add_argument("args", nargs=argparse.REMAINDER, help="passed to the benchmark script")
    return parser


# --------------------------------------------------------------------------- reproduce


def _is_skonline_clone(root):
    """Whether ``root`` is a clone of the skonline repository: a ``pyproject.toml`` whose project
    is named skonline, next to the ``skonline`` package and a ``benchmarks`` folder."""
    pyproject = root / "pyproject.toml"
    if not (pyproject.is_file() and (root / "skonline" / "__init__.py").is_file()
            and (root / "benchmarks").is_dir()):
        return False
    try:
        import tomllib

        with open(pyproject, "rb") as fh:
            name = tomllib.load(fh).get("project", {}).get("name")
    except (ImportError, OSError, ValueError):
        return False
    return isinstance(name, str) and name.lower() == "skonline"


def find_benchmark(family, repo=None):
    """Path of ``benchmarks/<family>.py`` of the skonline repository, or None.

    Only the repository's own benchmarks run: ``family`` must be one of
    :data:`BENCHMARK_FAMILIES`, and the repository is the one that holds the imported package (an
    editable install or a source checkout), or ``repo`` when given explicitly (``--repo``). It
    must be a clone of skonline (:func:`_is_skonline_clone`). The current directory and its
    parents are never searched: a folder that merely contains ``skonline/`` and ``benchmarks/``
    does not get its scripts run.
    """
    if family not in BENCHMARK_FAMILIES:
        return None
    root = Path(repo).expanduser().resolve() if repo is not None else Path(__file__).resolve().parents[2]
    if not _is_skonline_clone(root):
        return None
    script = (root / "benchmarks" / f"{family}.py").resolve()
    if script.parent != (root / "benchmarks").resolve() or not script.is_file():
        return None  # a symbolic link out of the repository's benchmarks folder
    return script


def reproduce(family, args, *, dry_run=False, out=None, repo=None):
    out = out if out is not None else sys.stdout
    if family not in BENCHMARK_FAMILIES:
        print(f"skonline reproduce: unknown family {family!r}; choose one of "
              f"{', '.join(BENCHMARK_FAMILIES)}.", file=sys.stderr)
        return 2
    script = find_benchmark(family, repo)
    if script is None:
        where = (f"in {repo} (not a clone of the skonline repository)" if repo is not None
                 else "next to the installed package")
        print(
            f"skonline reproduce: benchmarks/{family}.py not found {where}. The benchmark scripts "
            "are not part of the installed package: use a clone of the repository (git clone the "
            "skonline repository, cd into it, pip install -e '.[bench]'), pass it with "
            f"--repo <clone>, or run 'python benchmarks/{family}.py' there.",
            file=sys.stderr,
        )
        return 2
    root = script.parent.parent
    cmd = [sys.executable, str(script), *args]
    print(f"skonline reproduce {family}: {script}", file=out)
    print(f"  command: {' '.join(cmd)}  (in {root})", file=out)
    if "SKONLINE_DATA" not in os.environ:
        print("  note: SKONLINE_DATA is not set; the datasets are read from ~/skonline_data "
              "(downloaded there when missing).", file=out)
    out.flush()
    if dry_run:
        return 0
    env = dict(os.environ)
    # the benchmark imports skonline from this clone, as `python benchmarks/<family>.py` would
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    return subprocess.call(cmd, cwd=root, env=env)


# --------------------------------------------------------------------------- main


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # 'skonline' and 'skonline --quick ...' mean 'skonline tour ...'
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "tour")
    args = _parser().parse_args(argv)
    if args.command == "reproduce":
        return reproduce(args.family, args.args, dry_run=args.dry_run, repo=args.repo)
    from ._tour import FAMILIES, run

    return run(
        data_home=args.data_home,
        output_dir=args.output_dir,
        quick=args.quick,
        progress=False if args.no_progress else None,
        families=args.families or FAMILIES,
    )
