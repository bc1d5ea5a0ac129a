"""Independent compiled passes in threads: the experts of an online ensemble.

Every compiled function of skonline releases the GIL (``nogil``, :data:`~skonline.utils._jit.JIT_OPTIONS`),
so passes over different estimators' states run at the same time in threads of one process. Each
task here touches its own estimator only (its working copy, :mod:`skonline._atomic`), so the
results do not depend on the number of threads nor on their timing: one thread or several give the
same bits (``tests/experts/test_ensemble_threads.py``).

* One pool per process and size, made on first use and made again in a forked child (a fork
  copies the pool object but not its threads).
* A task runs in a copy of the caller's context variables and scikit-learn's configuration
  (``sklearn.get_config`` is per thread), as ``sklearn.utils.parallel`` does for joblib.
* A task started from a pool thread runs the tasks it submits itself, one after another (an
  ensemble nested in an ensemble): a pool thread never waits for the pool.
* All tasks finish before any error is raised; the error raised is that of the first failing
  task in their order (the same error whatever the timing). An interrupt of the caller
  (``KeyboardInterrupt``) drops the tasks not started and waits for the running ones (each at most
  one estimator's chunk) before it propagates: a task still running would write into buffers its
  estimator shares with the next call (:class:`~skonline.utils._growing.GrowingStateMixin`).
"""

import contextvars
import os
import queue
import threading

from sklearn import config_context, get_config

_THREAD_PREFIX = "skonline-worker"
_POOLS = {}  # (pid, size) -> _Pool
_IN_WORKER = threading.local()
_CPUS = {}  # pid, n: available_cpus() of this process


def available_cpus():
    """CPUs this process may run on: joblib's count (which honours cgroup quotas), at most the
    process's affinity mask where the system has one; counted once per process."""
    pid = os.getpid()
    if _CPUS.get("pid") != pid:
        from joblib import cpu_count

        n = cpu_count()
        if hasattr(os, "sched_getaffinity"):
            n = min(n, len(os.sched_getaffinity(0)))
        _CPUS.update(pid=pid, n=max(1, n))
    return _CPUS["n"]


def effective_n_threads(n_jobs, n_tasks):
    """The threads ``n_jobs`` stands for, for ``n_tasks`` tasks: ``None`` or ``-1`` every available
    CPU, ``-2`` all but one, and so on, a positive int that many; never more than the tasks."""
    if n_jobs is None:
        n = available_cpus()
    elif n_jobs < 0:
        n = available_cpus() + 1 + n_jobs
    else:
        n = n_jobs
    return max(1, min(int(n), n_tasks))


class _Pool:
    """``size`` daemon threads taking jobs from one queue. Jobs and results travel through
    ``queue.SimpleQueue`` (C: its ``put`` and ``get`` run no Python line and take no lock at
    Python level), so the calling thread runs no code in which an interrupt could leave a lock
    held."""

    def __init__(self, size):
        self.jobs = queue.SimpleQueue()
        for i in range(size):
            threading.Thread(target=self._work, name=f"{_THREAD_PREFIX}_{i}", daemon=True).start()

    def _work(self):
        _IN_WORKER.active = True
        while True:
            index, run, results = self.jobs.get()
            results.put((index, run()))


def _pool(size):
    """The process's pool of ``size`` threads (made on first use; a forked child, which has the
    parent's pools but none of their threads, makes its own)."""
    key = (os.getpid(), size)
    pool = _POOLS.get(key)
    if pool is None:
        for k in [k for k in list(_POOLS) if k[0] != key[0]]:
            _POOLS.pop(k, None)
        pool = _POOLS.setdefault(key, _Pool(size))
    return pool


def _job(task, config, cancelled, started, ended):
    """``task`` as a job: in a copy of the caller's context variables and scikit-learn
    configuration; ``(True, result)``, ``(False, exception)``, or ``(False, None)`` when the call
    was given up (``cancelled``) before the job started. Appends to ``started`` before it looks at
    ``cancelled`` and to ``ended`` when done, so that the caller can wait for every job that may
    still touch an estimator."""
    context = contextvars.copy_context()

    def run():
        try:
            with config_context(**config):
                return True, task()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            return False, exc

    def job():
        started.append(None)
        try:
            return (False, None) if cancelled[0] else context.run(run)
        finally:
            ended.append(None)

    return job


def run_tasks(tasks, n_threads):
    """The results of the zero-argument callables ``tasks``, in their order, computed in
    ``n_threads`` threads (``<= 1``, a single task or a call from a pool thread: in this thread,
    one after another). Tasks are started in their order: put the longest first."""
    if n_threads <= 1 or len(tasks) <= 1 or getattr(_IN_WORKER, "active", False):
        return [task() for task in tasks]
    config = get_config()
    cancelled, started, ended = [False], [], []
    results = queue.SimpleQueue()
    out = [None] * len(tasks)
    try:
        pool = _pool(n_threads)
        for index, task in enumerate(tasks):
            pool.jobs.put((index, _job(task, config, cancelled, started, ended), results))
        for _ in range(len(tasks)):
            index, outcome = results.get()
            out[index] = outcome
    except BaseException:
        # an interrupt of this thread (KeyboardInterrupt), wherever it came: the jobs not started
        # are given up (a job started from now on sees ``cancelled`` and does nothing), and those
        # running are waited for (each at most one estimator's chunk): a task still running
        # would write into buffers its estimator shares with the next call
        cancelled[0] = True
        while len(ended) < len(started):
            try:
                results.get(timeout=0.01)
            except BaseException:  # noqa: BLE001 - queue.Empty, or another interrupt: keep waiting
                continue
        raise
    for ok, value in out:
        if not ok:
            raise value
    return [value for _, value in out]
