"""Loaders for public benchmark datasets used in online-learning papers.

Each dataset is cached as ``<name>.npz`` in a data home folder (argument
``data_home``, else the environment variable ``SKONLINE_DATA``, else
``~/skonline_data``). A folder that already holds the ``.npz`` files is used
as is; a missing file is built once from the original public source (UCI,
LIBSVM or OpenML), downloaded with :mod:`urllib`.

========================  ======================  ==========================
loader                    task                    size
========================  ======================  ==========================
:func:`load_magic04`      binary (+1 / -1)        19,020 x 10
:func:`load_phishing`     binary (0 / 1)          11,055 x 68
:func:`load_a9a`          binary (-1 / +1)        32,561 (+16,281) x 123 CSR
:func:`load_bank32nh`     regression              8,192 x 32
:func:`load_elevators`    regression              16,599 x 18
:func:`load_ailerons`     regression              13,750 x 40
:func:`load_casp`         regression              45,730 x 9
:func:`load_ijcnn1`       binary (-1 / +1)        49,990 (+91,701) x 22
:func:`load_cod_rna`      binary (-1 / +1)        59,535 x 8
:func:`load_adult`        binary (0 / 1), groups  32,561 (+16,281) x 108
========================  ======================  ==========================
"""

from ._base import (
    clear_data_home,
    dataset_names,
    get_data_home,
    load_a9a,
    load_adult,
    load_ailerons,
    load_bank32nh,
    load_casp,
    load_cod_rna,
    load_dataset,
    load_elevators,
    load_ijcnn1,
    load_magic04,
    load_phishing,
)

__all__ = [
    "clear_data_home",
    "dataset_names",
    "get_data_home",
    "load_a9a",
    "load_adult",
    "load_ailerons",
    "load_bank32nh",
    "load_casp",
    "load_cod_rna",
    "load_dataset",
    "load_elevators",
    "load_ijcnn1",
    "load_magic04",
    "load_phishing",
]
