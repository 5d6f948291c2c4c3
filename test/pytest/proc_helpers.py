"""Module-level jitted functions for test_processes.py: importable by the
workers that multiprocessing's spawn starts (pytest puts this directory on
sys.path, which spawn passes on)."""

import os

import numpy as np

from tinymlir import jit


@jit
def scaled_sum(x):
    return (np.tanh(x) * 2.0).sum(axis=0)


def run_and_count(x):
    """scaled_sum(x) in a worker, with what its call cost this process so far."""
    y = scaled_sum(x)
    s = scaled_sum.stats()
    return y, s.compilations, s.disk_hits, os.getpid()


def poly(x):
    return x * x * 3.0 + x - 1.0


@jit
def jpoly(x):
    return x * x * 3.0 + x - 1.0


def jpoly_stats():
    """What jpoly cost this process (run on each Dask worker)."""
    s = jpoly.stats()
    return s.compilations, s.disk_hits
