"""Bundles: a walk's named arrays, handed to kernels by reference.

In Python a bundle is a namedtuple of NumPy arrays (``Walk``, ``Clock``). A plain
namedtuple reaches a Numba function as every member of every array's struct (data
pointer, shape, strides, meminfo, ...), about 80 machine words for the walk, copied
at every call LLVM does not inline: about half of a step went to that
(results/speed-levers.md). A bundle type reaches a kernel as one pointer to those
structs instead. When Python calls an entry point, the wrapper unboxes the arrays
once into a block on its own stack, which lives for the whole call; ``w.node`` in a
kernel is a load through the pointer, and passing ``w`` on costs one register.

Kernels only ever receive bundles: none is built or returned in kernel code.
"""
from collections import namedtuple

from llvmlite import ir
from numba.core import cgutils, imputils, types
from numba.core.datamodel import models, register_default
from numba.core.extending import (
    NativeValue, infer_getattr, lower_getattr_generic, typeof_impl, unbox,
)
from numba.core.typing.templates import AttributeTemplate

# What bundles need of Numba's internals beyond the imports (checked before use, .hooks).
REQUIRED = [(cgutils, a) for a in ("gep_inbounds", "alloca_once", "alloca_once_value",
                                   "if_likely", "is_not_null", "is_null", "true_bit",
                                   "false_bit")] + [(imputils, "impl_ret_borrowed")]


class BundleType(types.Type):
    """The Numba type of one bundle class with given array types."""

    def __init__(self, cls_name, fields, arrays):
        self.cls_name = cls_name
        self.fields = tuple(fields)
        self.arrays = tuple(arrays)
        inner = ", ".join(f"{f}: {t}" for f, t in zip(self.fields, self.arrays))
        super().__init__(name=f"{cls_name}&({inner})")


@register_default(BundleType)
class BundleModel(models.PrimitiveModel):
    """A pointer to a struct of the arrays' structs."""

    def __init__(self, dmm, fe_type):
        block = ir.LiteralStructType([dmm.lookup(t).get_value_type() for t in fe_type.arrays])
        super().__init__(dmm, fe_type, block.as_pointer())


@infer_getattr
class BundleAttributes(AttributeTemplate):
    key = BundleType

    def generic_resolve(self, typ, attr):
        if attr in typ.fields:
            return typ.arrays[typ.fields.index(attr)]
        return None


@lower_getattr_generic(BundleType)
def bundle_getattr(context, builder, typ, val, attr):
    k = typ.fields.index(attr)
    value = builder.load(cgutils.gep_inbounds(builder, val, 0, k))
    return imputils.impl_ret_borrowed(context, builder, typ.arrays[k], value)


@unbox(BundleType)
def unbox_bundle(typ, obj, c):
    """Unbox each array into a block on the calling wrapper's stack."""
    block_ty = c.context.data_model_manager.lookup(typ).get_value_type().pointee
    block = cgutils.alloca_once(c.builder, block_ty)
    failed = cgutils.alloca_once_value(c.builder, cgutils.false_bit)
    for k, (field, arrty) in enumerate(zip(typ.fields, typ.arrays)):
        member = c.pyapi.object_getattr_string(obj, field)
        with cgutils.if_likely(c.builder, cgutils.is_not_null(c.builder, member)):
            native = c.unbox(arrty, member)
            c.pyapi.decref(member)  # the bundle keeps the array alive
            c.builder.store(native.value, cgutils.gep_inbounds(c.builder, block, 0, k))
            with c.builder.if_then(native.is_error, likely=False):
                c.builder.store(cgutils.true_bit, failed)
        with c.builder.if_then(cgutils.is_null(c.builder, member), likely=False):
            c.builder.store(cgutils.true_bit, failed)
    return NativeValue(block, is_error=c.builder.load(failed))


def bundle(name, fields, module):
    """A namedtuple class of arrays (defined in ``module``) that kernels receive as a
    :class:`BundleType`."""
    cls = namedtuple(name, fields, module=module)

    @typeof_impl.register(cls)
    def _typeof(val, ctx):
        return BundleType(name, cls._fields, [typeof_impl(a, ctx) for a in val])

    return cls
