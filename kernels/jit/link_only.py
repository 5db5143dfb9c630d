"""Kernels called only by other kernels are optimized and compiled to machine code
once, inside the entry point that calls them, never on their own.

Numba finalizes every function it compiles: it links in the IR of all its callees,
runs LLVM's whole module pipeline over the result and emits machine code for it.
A kernel deep in the call tree is therefore optimized and code-generated again in
every kernel above it: for the default kernels, 244 libraries whose finalizing took
11 of a 25-second cold compile, of which the entry point's own 1.5 s is the only
part a walk ever runs. A wrapperless kernel's library here (:class:`LinkOnlyLibrary`)
stops after linking: its IR has had Numba's per-function passes, and goes on to the
callers as it is; the entry point (a normal library) optimizes the whole linked
module once, inlining across it as before, and emits the one machine code. Such a
library has no machine code of its own, which is fine: no one calls a wrapperless
kernel from Python (:class:`kernels.jit.Kernel` sends those calls to its twin).

Its cache entry (:class:`LinkOnlyCache`) holds its IR as bitcode, so a later process
compiling another entry point links the kernel from the cache without typing it.

With every kernel optimized once, in its entry point, inlining costs little compile
time, so LLVM's inliner is given a threshold (:data:`INLINE_THRESHOLD`) under which
the walk loop takes in the draw, the mask update and the checks, and the two
dispatchers it still calls (``do_action``, ``deliver_message``) take in the handlers:
one or two calls a step where it made about ten, each saving and restoring registers
and reloading the walk's array pointers (results/speed-levers.md has the
figures). The option is LLVM's, for the whole process, so an entry point's library
(:class:`EntryLibrary`) sets it only while LLVM optimizes that library's module, and
then sets it to the threshold LLVM derives from Numba's optimization level: other
code compiled in the process is inlined as it would be without kraftwalk.
"""
import inspect

from numba.core import compiler, config
from numba.core.caching import CompileResultCacheImpl
from numba.core.codegen import JITCodeLibrary
import llvmlite.binding as ll

from .cache_lock import KernelCache

# LLVM's cost threshold for inlining a call in an entry point (its default at O3: 250).
INLINE_THRESHOLD = 10000

# What this module needs of Numba's internals (checked before use, .hooks): the
# library's finalizing stages, and the fields of a cached compile result.
REQUIRED = [(JITCodeLibrary, a) for a in (
    "_optimize_final_module", "_finalize_final_module", "_finalize_dynamic_globals",
    "_verify_declare_only_symbols", "_ensure_finalized", "serialize_using_object_code",
    "get_pointer_to_function", "enable_object_caching")] + [(CompileResultCacheImpl, "rebuild"),
                                   (compiler.CompileResult, "_rebuild")]
# CompileResult._rebuild's parameters (the serialized payload's fields, in order) and
# the CompileResult fields _LinkOnlyCacheImpl.rebuild fills in.
PAYLOAD = ("libdata", "fndesc", "env", "signature", "objectmode", "lifted", "typeann",
           "reload_init", "referenced_envs")
RESULT_FIELDS = {"target_context", "typing_context", "library", "environment", "entry_point",
                 "fndesc", "type_annotation", "signature", "objectmode", "lifted",
                 "typing_error", "call_helper", "metadata", "reload_init", "referenced_envs"}


def compile_result_matches() -> bool:
    """Whether Numba serializes and rebuilds a compile result as this module does."""
    params = list(inspect.signature(compiler.CompileResult._rebuild).parameters)
    return (tuple(params[1:]) == PAYLOAD  # after target_context
            and set(compiler.CompileResult._fields) == RESULT_FIELDS)


def _level_threshold() -> int:
    """The inlining threshold LLVM's pipeline derives from Numba's optimization level
    (LLVM's OptAggressiveThreshold at -O3, its default below)."""
    return 250 if int(config.OPT) >= 3 else 225


class EntryLibrary(JITCodeLibrary):
    """An entry point's code library: LLVM inlines up to :data:`INLINE_THRESHOLD`
    while it optimizes this module, and at the level's own threshold after."""

    def _optimize_final_module(self):
        ll.set_option("", f"-inline-threshold={INLINE_THRESHOLD}")
        try:
            super()._optimize_final_module()
        finally:
            ll.set_option("", f"-inline-threshold={_level_threshold()}")

# The serialized form's kind (Numba's own are "object" and "bitcode").
KIND = "kraftwalk-link-only"


class _NoMachineCode:
    """The codegen seen through a link-only library: the same, except that it does
    not fill in the library's Env pointer, which would live in machine code the
    library never has. (Wrapperless kernels without NRT never read their Env: it
    serves the Python wrapper and object-mode fallbacks.)"""

    def __init__(self, codegen):
        self._codegen = codegen

    def set_env(self, env_name, env):
        pass

    def __getattr__(self, name):
        return getattr(self._codegen, name)


class LinkOnlyLibrary(JITCodeLibrary):
    """A code library whose finalizing links its callees' IR and stops there: Numba's
    own ``finalize`` with its two later stages, the module pipeline and the hand-over
    to the JIT engine (machine code), left out."""

    @property
    def codegen(self):
        return _NoMachineCode(self._codegen)

    def _optimize_final_module(self):
        pass  # the entry point's library runs the module pipeline, once

    def _finalize_final_module(self):
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    def get_pointer_to_function(self, name):
        """None of its functions has machine code: 0, as for a name not defined."""
        self._ensure_finalized()
        return 0

    def serialize_using_object_code(self):
        self._ensure_finalized()
        return (self.name, KIND, self._final_module.as_bitcode())

    @classmethod
    def from_bitcode(cls, codegen, name, bitcode):
        self = cls(codegen, name)
        self._final_module = ll.parse_bitcode(bitcode)
        self._finalized = True
        return self


class _LinkOnlyCacheImpl(CompileResultCacheImpl):
    def rebuild(self, target_context, payload):
        libdata, fndesc, env, signature, objectmode, lifted, typeann, reload_init, envs = payload
        name, kind, data = libdata
        if kind != KIND:  # an entry saved some other way
            return super().rebuild(target_context, payload)
        for fn in reload_init or ():
            fn()
        library = LinkOnlyLibrary.from_bitcode(target_context.codegen(), name, data)
        # as CompileResult._rebuild does, with the library made here
        return compiler.CompileResult(
            target_context=target_context, typing_context=target_context.typing_context,
            library=library, environment=env,
            entry_point=target_context.get_executable(library, fndesc, env),
            fndesc=fndesc, type_annotation=typeann, signature=signature,
            objectmode=objectmode, lifted=lifted, typing_error=None, call_helper=None,
            metadata=None, reload_init=reload_init, referenced_envs=envs)


class LinkOnlyCache(KernelCache):
    """The kernels' function cache, for compile results whose library is link-only."""
    _impl_class = _LinkOnlyCacheImpl
