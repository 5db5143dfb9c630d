"""Kernels on Numba's internals: the fast path of :mod:`.jit`.

``_nrt=False`` compiles without Numba's reference-counting runtime: kernels
never allocate, and without it passing the walk's arrays to a function costs
no atomic increfs and decrefs (with it, a call cost ~70 atomics: 40x slower).
Any allocation inside a kernel is then a compile error, which is the point.

No kernel is ``inline="always"``: Numba inlines such a function by copying and
re-typing its IR at every call site, which took a fifth of the cold compile,
while LLVM inlines callees on its own, once per entry point (:mod:`.link_only`;
results/speed-levers.md has the figures). And kernels are compiled without the
Python wrappers Numba would build for each (:class:`Kernel`): only the entry points
are called from Python, through a twin that has them. Their pipeline folds tests of
the literal feature mask before typing (:class:`FoldFeatureSwitches`), so a mask
compiles only the model it runs; and a kernel compiles once for plain argument types
(:meth:`Kernel.get_call_template`), not once per constant or integer width passed.

All of this rests on Numba internals, each named in :data:`REQUIRED`: :mod:`.jit`
uses this module only where every one of them is there.
"""
import operator
import types

from numba import literally  # noqa: F401  (re-exported by .jit: entry points' masks)
from numba.core import ir, ir_utils, types as nbtypes
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.registry import CPUDispatcher
from numba.core.untyped_passes import RewriteSemanticConstants

from . import bundles as _bundle, cache_lock, link_only
from .cache_lock import KernelCache
from .link_only import EntryLibrary, LinkOnlyCache, LinkOnlyLibrary
from .numba_cache import kernel_cache_dir

MODE = "hooks"


class Kernel(CPUDispatcher):
    """A kernel compiled without Python wrappers: Numba builds a CPython and a C
    wrapper for every function it compiles, about a quarter of the cold compile,
    yet kernels call each other natively and only entry points are called from
    Python. A call from Python (an entry point, a test) goes to the kernel's twin, the
    same function compiled with its wrappers under its own cache entry (a copy of the
    function named ``<name>__entry``: the cache key does not hold the wrapper flags,
    so the two must never share one)."""

    _twin = None
    _caching = False

    def python_entry(self) -> CPUDispatcher:
        """The twin with Python wrappers (made on first use)."""
        if self._twin is None:
            fn = self.py_func
            copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__,
                                      fn.__defaults__, fn.__closure__)
            copy.__qualname__ = fn.__qualname__ + "__entry"
            copy.__module__, copy.__doc__ = fn.__module__, fn.__doc__
            opts = {k: v for k, v in self.targetoptions.items() if k not in _NO_WRAPPERS}
            twin = Entry(copy, locals=self.locals, targetoptions=opts,
                         pipeline_class=FeatureSwitchCompiler)
            if self._caching:
                twin.enable_caching()
            self._twin = twin
        return self._twin

    def __call__(self, *args, **kws):
        return self.python_entry()(*args, **kws)

    def enable_caching(self):
        with kernel_cache_dir(MODE):
            self._cache = LinkOnlyCache(self.py_func)

    def get_call_template(self, args, kws):
        """A kernel called from a kernel is compiled for its arguments' plain types
        (:func:`_plain`), not one specialisation per constant and integer width passed
        (``report(w, VOTE_UNIQUENESS, ...)`` had 14): LLVM inlines it into its entry
        point and propagates the constants there anyway. Only the feature masks stay
        literal (LITERAL_PARAMS): their tests fold before typing
        (:class:`FoldFeatureSwitches`)."""
        pysig, args = self.fold_argument_types(args, kws)
        args = tuple(a if name in LITERAL_PARAMS else _plain(a)
                     for name, a in zip(pysig.parameters, args))
        return super().get_call_template(args, {})


class Entry(CPUDispatcher):
    """A kernel's twin with Python wrappers (an entry point): cached in the kernels'
    folder with serialized saves (:mod:`.cache_lock`)."""

    def enable_caching(self):
        with kernel_cache_dir(MODE):
            self._cache = KernelCache(self.py_func)


def _plain(ty):
    """A kernel argument's type for compiling: no literal, and a narrower signed integer
    (a field read from the walk's int32 arrays) as int64, which Numba's arithmetic
    promotes it to anyway: one compile where a caller passes a field and another a
    computed value."""
    ty = nbtypes.unliteral(ty)
    if isinstance(ty, nbtypes.Integer) and ty.signed and ty.bitwidth < 64:
        return nbtypes.int64
    return ty


_NO_WRAPPERS = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}
# Parameters that carry a feature or check mask, compiled as literals.
LITERAL_PARAMS = frozenset({"features", "checks"})


def kernel(fn=None, **options):
    """``njit`` for kernel code: cached, without NRT, a :class:`Kernel`."""
    cache = options.pop("cache", True)
    targetoptions = {"nopython": True, "boundscheck": None, "_nrt": False, **options,
                     **_NO_WRAPPERS}

    def make(f):
        disp = Kernel(f, locals={}, targetoptions=targetoptions,
                      pipeline_class=FeatureSwitchCompiler)
        disp._caching = cache
        if cache:
            disp.enable_caching()
        return disp

    return make if fn is None else make(fn)


@register_pass(mutates_CFG=False, analysis_only=False)
class FoldFeatureSwitches(FunctionPass):
    """Turn ``features & FLAG`` into its value where ``features`` is a literal argument.

    Kernels receive the feature mask as a literal, but Numba's branch pruning, run
    before typing, folds a test on an argument only when it is compared with None:
    ``if features & SNAPSHOTS:`` stayed, so every mask typed and compiled the whole
    model (snapshot, voter-change and disk-loss handlers included) and only LLVM
    dropped the dead paths. With the test a constant, the pruning that follows drops
    the branch before typing, and the kernels it alone calls are never compiled."""

    _name = "fold_feature_switches"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        fir = state.func_ir
        changed = False
        for block in fir.blocks.values():
            for stmt in block.body:
                if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                        and stmt.value.op == "binop" and stmt.value.fn is operator.and_):
                    continue
                sides = [_literal_arg(fir, state.args, v) for v in (stmt.value.lhs, stmt.value.rhs)]
                consts = [_int_const(fir, v) for v in (stmt.value.lhs, stmt.value.rhs)]
                if sides[0] is not None and consts[1] is not None:
                    value = sides[0] & consts[1]
                elif sides[1] is not None and consts[0] is not None:
                    value = consts[0] & sides[1]
                else:
                    continue
                expr, stmt.value = stmt.value, ir.Const(value, stmt.value.loc)
                defs = fir._definitions[stmt.target.name]  # others, if any, stay
                defs[:] = [stmt.value if d is expr else d for d in defs]
                changed = True
        return changed


def _literal_arg(fir, args, var):
    """The value of ``var`` if it is a literal integer argument, else None."""
    d = ir_utils.guard(ir_utils.get_definition, fir, var)
    if isinstance(d, ir.Arg) and d.index < len(args):
        ty = args[d.index]
        if isinstance(ty, nbtypes.IntegerLiteral):
            return ty.literal_value
    return None


def _int_const(fir, var):
    try:
        c = ir_utils.find_const(fir, var)
    except ir_utils.GuardException:
        return None
    return c if isinstance(c, int) and not isinstance(c, bool) else None


class FeatureSwitchCompiler(CompilerBase):
    """Numba's nopython pipeline with :class:`FoldFeatureSwitches` before its first
    dead-branch pruning; a wrapperless kernel's code goes into a link-only library
    (:mod:`.link_only`), optimized and compiled only inside its entry points, and an
    entry point's into an :class:`~.link_only.EntryLibrary`."""

    def compile_extra(self, func):
        if self.state.library is None:
            codegen, name = self.state.targetctx.codegen(), func.__qualname__
            if self.state.flags.no_cpython_wrapper:
                self.state.library = LinkOnlyLibrary(codegen, name)
            else:  # as Numba makes a library: serializable for the cache
                self.state.library = EntryLibrary(codegen, name)
                self.state.library.enable_object_caching()
        return super().compile_extra(func)

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(FoldFeatureSwitches, RewriteSemanticConstants)
        pm.finalize()
        return [pm]


def entry(dispatcher):
    """The dispatcher Python calls for a kernel: its twin with wrappers."""
    return dispatcher.python_entry() if isinstance(dispatcher, Kernel) else dispatcher


_ENTRY_POINTS = {}


def call_with_features(dispatcher, *args):
    """Call a kernel whose last argument is the literal feature mask.

    Numba resolves a literal argument from Python by failing and retrying its
    dispatch, about 10 ms a call; here the specialisation is compiled (or loaded
    from the cache) once per (kernel, mask) and its entry point called directly,
    about 1 us.
    """
    features = int(args[-1])
    key = (dispatcher, features)
    compiled = _ENTRY_POINTS.get(key)
    if compiled is None:
        twin = entry(dispatcher)
        sig = tuple(twin.typeof_pyval(a) for a in args[:-1]) + (nbtypes.literal(features),)
        compiled = _ENTRY_POINTS[key] = twin.compile(sig)
    return compiled(*args[:-1], features)


bundle = _bundle.bundle

# Every internal of Numba this module and the ones it imports use, beyond the imports
# themselves: one missing (a Numba that moved it) and .jit falls back to plain Numba.
REQUIRED = [
    (CPUDispatcher, "get_call_template"), (CPUDispatcher, "fold_argument_types"),
    (CPUDispatcher, "typeof_pyval"), (CPUDispatcher, "compile"),
    (CPUDispatcher, "enable_caching"), (CompilerBase, "compile_extra"),
    (DefaultPassBuilder, "define_nopython_pipeline"), (PassManager, "add_pass_after"),
    (ir_utils, "guard"), (ir_utils, "get_definition"), (ir_utils, "find_const"),
    (ir_utils, "GuardException"),
    *cache_lock.REQUIRED, *link_only.REQUIRED, *_bundle.REQUIRED,
]


def missing_internal() -> str | None:
    """The first internal of Numba the hooks need that this Numba lacks, else None."""
    for owner, name in REQUIRED:
        if not hasattr(owner, name):
            where = (owner.__name__ if isinstance(owner, types.ModuleType)
                     else f"{owner.__module__}.{owner.__qualname__}")
            return f"{where}.{name}"
    if not link_only.compile_result_matches():
        return "numba.core.compiler.CompileResult (its serialized fields)"
    return None
