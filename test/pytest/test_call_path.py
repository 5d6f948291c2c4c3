"""The call path of a jitted function: one specialization key, built in C++
(python/src/cache.cpp); a hit runs from C++ without entering Python where the
specialization has a fast plan; per-function memos are bounded and cleared with
the cache; cache_limit is options.def's row."""

import collections

import numpy as np
import pytest

import tinymlir
from tinymlir import _jit, _tinymlir as _core, jit

CASES = [
    (lambda x: np.tanh(x) * 2.0, np.linspace(-1, 1, 16, dtype=np.float32)),
    (lambda x: x.sum(), np.arange(16.0)),  # a NumPy scalar
    (lambda x: x.astype(np.int64) * 3, np.arange(16, dtype=np.int32)),  # int64's NumPy type
    (lambda x, y: x @ y, np.ones((3, 4)), np.ones((4, 2))),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_a_hit_with_a_fast_plan_never_enters_python(case, monkeypatch):
    fn, *args = CASES[case]
    f = jit(fn)
    want = f(*args)  # compiles, through Python
    assert f.compile(*args)._fast_plan() is not None

    def refuse(self, leaves):
        raise AssertionError("the Python call path ran")

    monkeypatch.setattr(_jit.Specialization, "run", refuse)
    got = f(*args)
    assert type(got) is type(want) and type(got) is type(fn(*args))
    assert np.asarray(got).dtype == np.asarray(fn(*args)).dtype
    np.testing.assert_array_equal(got, want)
    assert f.stats().hits >= 2


def test_specializations_without_a_fast_plan_still_run_from_the_cache():
    def write(x):
        x[0] = 1.0
        return x, x[1:]

    f = jit(write)
    a = np.zeros(3)
    f(a)
    assert f.compile(a)._fast_plan() is None
    b = np.zeros(3)
    r, v = f(b)
    assert r is b and np.shares_memory(v, b) and b[0] == 1.0
    assert f.stats().compilations == 1


def test_fast_path_keys_like_the_python_path():
    f = jit(lambda x, k: x * k)
    x = np.arange(4.0)
    assert f(x, 2).tolist() == [0, 2, 4, 6]
    assert f(x, 2.0).dtype == np.float64 and f(x, 3).tolist() == [0, 3, 6, 9]
    assert f(x.astype(np.float32), 2).dtype == np.float32
    assert f(x[::2], 2).tolist() == [0, 4]  # a strided layout: its own key
    assert f.stats().compilations == 4


def test_the_key_is_key_h_grammar():
    """The text of include/tinymlir/key.h's example tree; test/unit/jit_test.cpp
    writes the same text through the C++ walk."""
    x = np.zeros((2, 3), np.float32)
    args = (x, [True, 7, 0.5], {"k": "ab"}, None, x[:, ::2], x)
    key, leaves = _core.SpecializationCache.key(args, {"n": 2**70}, "opts")
    assert key == (
        "(A<f4[2,3,][T;i7;f3fe0000000000000;]{k1:ks2:ab}N;A<f4[2,2,]S3,2,A<f4[2,3,])"
        "k1:ni1180591620717411303424;|aliases 0,1,0,|opts"
    ), key
    assert [a is b for a, b in zip(leaves, (x, args[4], x))] == [True] * 3


def test_tree_names_are_bounded_and_cleared_with_the_cache():
    Point = collections.namedtuple("Point", "x y")
    f = jit(lambda p: p.x + p.y)
    for n in range(1, 6):
        f(Point(np.ones(n), np.ones(n)))
    assert len(f._tree_keys) == 5
    f.clear_cache()
    assert not f._tree_keys and f.stats().size == 0
    f.cache_limit = 2
    for n in range(1, 6):
        f(Point(np.ones(n), np.ones(n)))
    assert len(f._tree_keys) <= 2 and f.stats().size <= 2


def test_cache_limit_is_the_option_row():
    f = jit(lambda x: x + 1, cache_limit=3)
    assert f.options.cache_limit == 3 and f.cache_limit == 3
    assert "cache_limit" in tinymlir.OPTIONS
    f.cache_limit = 1
    assert f.options.cache_limit == 1
    for n in range(1, 4):
        f(np.ones(n))
    assert f.stats().size == 1 and f.stats().evictions == 2
