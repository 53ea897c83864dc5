"""What the sweep has found and registered: one declaration per known defect class of
MLX's public API (the sweep's counterpart of the op records' KnownDefect), each with
its reproducer in probes/sweep/ (mlx + numpy, exit 1 while the defect is present),
and the documented limitations the sweep meets, each with where MLX says so.

A finding is explained when one of its failing checks matches a declaration; each
failing check is matched on its own, so a case that fails for a registered reason is
still reported for any second, unexplained failure. Classes the catalog register
already holds (harness/cases/defects.json) are named by their register id.

This is the one declaration of where a class shows. Each class declared here that is
neither a catalog class nor a limitation has one entry in the register's "sweep" list
(harness/cases/defects.json: status open/fixed/limitation, root cause, fix, gate line),
which `mlx-vjpcheck handoff <id>` hands over; cases/declared.sweep_problems holds the
two together (tests/cases/test_sweep_register.py). `mlx-vjpcheck register add
SWEEP.json --finding N` writes the entry of a new finding and prints the Known line to
add here; `mlx-vjpcheck register declared` writes the entry of a class declared here by
hand (with its reproducer in probes/sweep/).
"""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class Known:
    id: str              # the class: probes/sweep/<id>.py, or a catalog register id
    functions: tuple     # the public functions it shows in (fnmatch patterns)
    transform: str       # the check's transform (fnmatch pattern); "any" for a crash
    symptom: str         # "wrong value", "wrong shape", "raised", "non-finite", or a crash's "signal ..."
    rule: str            # the rule MLX breaks, one line
    limitation: str = ""  # non-empty: not a defect but a documented limitation (where MLX says so)
    catalog: bool = False  # the class is a catalog register entry (its reproducer is in probes/findings/)

    def matches(self, function: str, transform: str, symptom: str) -> bool:
        return (any(fnmatchcase(function, f) for f in self.functions) and fnmatchcase(transform, self.transform)
                and fnmatchcase(symptom, self.symptom))


SHAPELESS = "compile(*shapeless*)"
CRASH = "signal SIG*"

KNOWN = (
    Known("sign__shapeless_grad_shape", ("mx.sign", "nn.softshrink", "nn.Softshrink"), SHAPELESS, "wrong *",
          "Sign::jvp builds its zeros from the traced shape: under shapeless compile the gradient keeps it "
          "(and a fused kernel then reads the small buffer as a large one)"),
    Known("matrix_norm__shapeless_unflatten_grad_shape", ("mx.matrix_norm", "mx.linalg.norm"), SHAPELESS,
          "wrong shape", "Flatten::vjp unflattens to the traced shape; Unflatten::output_shapes never checks "
                         "the element count"),
    Known("tril__shapeless_fused_overread", ("mx.tril", "mx.triu", "nn.InstanceNorm", "nn.softshrink",
                                             "nn.Softshrink"), SHAPELESS, "wrong value",
          "tril/triu's mask has the traced length; Compiled::output_shapes takes the largest shape without "
          "checking they broadcast, so the fused kernel reads past the mask"),
    Known("tril__shapeless_fused_overread", ("mx.tril", "mx.triu"), "any", CRASH,
          "the same over-read, ending the process"),
    Known("slice_update__shapeless_update_grad_shape", ("mx.slice_update",), SHAPELESS, "wrong shape",
          "DynamicSliceUpdate::vjp slices the cotangent with the traced update shape"),
    Known("flip__shapeless_vjp_heap_overflow", ("mx.flip",), "any", CRASH,
          "Slice::vjp under shapeless compile keeps the traced start with stride -1 and writes before the "
          "gradient buffer"),
    Known("add__vmap_repeated_output_axis", ("mx.add",), "vmap(*in_axes=last)", "wrong shape",
          "vmap_replace moves the batch axis of an output once per occurrence, so a repeated output "
          "(add's VJP returns g twice) has it in the wrong place"),
    Known("expand_dims__vmap_multi_axis", ("mx.expand_dims",), "vmap(*in_axes=last)", "wrong shape",
          "ExpandDims::vmap compares each new axis with the original batch axis, not the shifted one"),
    Known("take__vmap_vjp_scatter_updates_axis", ("mx.take",), "vmap(vjp*in_axes=last)", "wrong value",
          "Scatter::vmap inserts an axis before moving the updates' batch axis, so it moves the wrong one"),
    Known("take__vmap_vjp_scatter_updates_axis", ("mx.take",), "any", CRASH,
          "the same misplaced updates, written out of bounds"),
    Known("put_along_axis__duplicate_writes", ("mx.put_along_axis",), "*", "wrong value",
          "ScatterAxis::vjp gives every duplicate write the cotangent: they must sum to it, as the forward "
          "keeps one of them"),
    Known("sum__shapeless_size_one_axis_crash", ("mx.sum", "mx.mean", "mx.max", "mx.min", "mx.median",
                                                 "mx.std", "mx.var"), "any", "signal SIG[SF][EP]*",
          "under dynamic tracing compute_reduce_shape keeps a Reduce over a size-1 axis in the graph, and "
          "evaluating it under compile(shapeless=True) kills the process"),
    Known("diagonal__vjp_zero_size_sigfpe", ("mx.diagonal", "mx.trace"), "any", "signal SIGFPE",
          "the VJP of diagonal of an array with a zero-size axis divides by that size (SIGFPE)"),
    Known("var__zero_size_hang", ("mx.var", "mx.std"), "any", "signal SIGKILL",
          "var over an empty axis of an array made from numpy hangs at some calls (a race); the sweep's "
          "watchdog kills the worker (SIGKILL)"),
    Known("as_strided__invalid_memory", ("mx.as_strided",), "any", CRASH,
          "the sweep calls as_strided with its fixed shape and strides at a smaller input (shapeless "
          "compile's second shape), where they point past the buffer",
          limitation="as_strided 'should be used with caution ... This can lead to the resulting array "
                     "pointing to invalid memory locations which can result into crashes' (MLX's docstring "
                     "of mx.as_strided)"),
    Known("irfft__jvp_odd_n_shape", ("mx.fft.irfft", "mx.fft.irfft2", "mx.fft.irfftn"), "*jvp*", "wrong shape",
          "FFT::jvp calls irfftn on the tangent without the output size: an odd n comes back n - 1 long"),
    Known("logcumsumexp__shapeless_zero_broadcast_shape", ("mx.logcumsumexp",), SHAPELESS, "wrong shape",
          "Compiled::output_shapes takes the largest size per axis: 0 broadcast with 1 comes out 1 (the "
          "VJP compares the cotangent with zeros({1}))"),
    Known("slice_update__vmap_unbatched_update", ("mx.slice_update",), "vmap(vjp*", "wrong value",
          "the VJP's zeros_like update is unbatched under vmap: only example 0's region is zeroed",
          catalog=True),
    Known("full__value_scaled", ("mx.full",), "*", "wrong value", "Full::vjp returns g times the value",
          catalog=True),
    Known("addmm__jvp_ignores_scale", ("mx.addmm",), "*", "wrong value",
          "AddMM::jvp ignores alpha and beta", catalog=True),
    Known("instance_norm__shape_specialised", ("nn.InstanceNorm",), SHAPELESS, "wrong shape",
          "its __call__ reshapes with the traced batch size",
          limitation="a function whose Python code reads shapes cannot be compiled shapeless "
                     "(MLX's documentation of mx.compile, 'shapeless')"),
    Known("sign__shapeless_grad_shape", ("mx.sign", "nn.softshrink", "nn.Softshrink"), "any", CRASH,
          "the same traced-shape zeros: traced at a smaller shape and called at a larger one (of a view, "
          "x[..., 1:]), the slice's VJP writes the larger gradient into them: heap corruption, SIGABRT"),
    Known("astype__integer_cast_passes_gradient", ("mx.astype",), "*", "wrong value",
          "AsType::vjp/jvp pass the cotangent (tangent) through a cast to an integer or bool type, where "
          "the cast is piecewise constant: its derivative is 0 between the steps"),
    Known("logcumsumexp__shapeless_zero_broadcast_shape", ("mx.std", "mx.var"), SHAPELESS, "wrong shape",
          "the same max(0, 1) = 1: var's x - mean(x, keepdims=True) over a zero-size axis, fused under "
          "shapeless compile, has a size-1 axis where eager has 0, and the gradient comes back (2, 1) for x (2, 0)"),
    Known("logcumsumexp__shapeless_zero_broadcast_shape", ("mx.std", "mx.var"), "any", "signal SIGSEGV",
          "the same max(0, 1) = 1: var's forward under shapeless compile at x (2, 0) writes a (2, 1) fused "
          "result into a 0-element buffer (SIGSEGV every time; eager and fixed-shape compile are right)"),
    Known("topk__shapeless_traced_kth", ("mx.topk",), SHAPELESS, "wrong value",
          "under shapeless compile topk's VJP, traced at one size of its axis and called at another, puts the "
          "cotangent on the wrong elements (kth and the slice start n - k come from the traced n) once any topk "
          "has run eagerly in the process; its forward refuses shapeless compile"),
    Known("expand_dims__vmap_multi_axis", ("mx.expand_dims",), "vmap(vmap(*", "wrong shape",
          "the same comparison, met by the inner vmap of a nested one (its batch on the last axis): "
          "vmap(vmap(f, in_axes=2)) of expand_dims(x, (0, 2)) gives (2, 1, 1, 3, 4, 2) for (2, 2, 1, 3, 1, 4)"),
    Known("elu__large_input_nan_gradient", ("nn.elu", "nn.selu", "nn.ELU", "nn.SELU"), "*", "non-finite",
          "nn.elu is mx.where(x > 0, x, alpha * (exp(x) - 1)): at large positive x the branch not taken "
          "overflows (exp(x) = inf) and where's VJP gives it 0 * inf = NaN, where the derivative is 1"),
    Known("add__vmap_repeated_output_axis", ("mx.add",), "vmap(vmap(*", "wrong shape",
          "the same misplaced batch axis of a repeated output, met by the inner vmap of a nested one (its "
          "batch on the last axis)"),
    Known("take__vmap_vjp_scatter_updates_axis", ("mx.take",), "vmap(vmap(vjp*", "wrong value",
          "the same misplaced updates axis, met by the inner vmap of a nested one (its batch on the last axis)"),
    Known("slice_update__vmap_unbatched_update", ("mx.slice_update",), "vmap(*", "wrong value",
          "under vmap an unbatched update is written into example 0 only: the forward with the update shared "
          "by the batch (in_axes None; verified by hand: examples 1.. keep their old values) and the VJP's "
          "zeros_like update, nested too", catalog=True),
    Known("lu__zero_size_sigfpe", ("mx.linalg.lu", "mx.linalg.lu_factor"), "any", "signal SIGFPE",
          "the CPU LU factorization of a matrix with a zero-size dimension divides by zero (SIGFPE) in the forward"),
    Known("conv__zero_out_channels_sgemm_exit", ("mx.conv1d", "mx.conv2d", "mx.conv3d", "mx.conv_general",
                                                 "mx.conv_transpose1d", "mx.conv_transpose2d",
                                                 "mx.conv_transpose3d"), "any", "exit 0",
          "a convolution with zero output channels calls SGEMM with a leading dimension of 0; the BLAS rejects "
          "it and ends the process with status 0 (in the forward)"),
    Known("take_along_axis__vmap_vjp_zero_size_batch", ("mx.take_along_axis", "nn.losses.nll_loss"), "*vmap(*",
          "wrong shape", "vmap of take_along_axis' VJP (a scatter-add into zeros) over arrays with a zero-size axis "
          "returns a batch of 1, not the mapped batch"),
    Known("split__vmap_empty_parts_axis", ("mx.split",), "vmap(*", "wrong shape",
          "vmap of split with the batch on a non-leading axis, the split axis of size 0, leaves the batch axis "
          "where the input had it on every part but the first"),
    Known("std__single_element_nan_gradient", ("mx.std",), "*", "non-finite",
          "std over an axis of size 1 is identically 0, but its VJP and JVP divide by it: 0 / 0 = NaN"),
    Known("norm__zero_size_jvp_nan", ("mx.linalg.norm", "mx.matrix_norm", "nn.losses.cosine_similarity_loss"),
          "identity*", "non-finite",
          "the JVP of the norm of an array with no elements divides <x, u> = 0 by the norm 0: NaN, where the "
          "norm of an empty array is identically 0 (the identity check meets it through the JVP)"),
    Known("norm__zero_size_jvp_nan", ("mx.linalg.norm", "mx.matrix_norm", "nn.losses.cosine_similarity_loss"),
          "jvp", "non-finite", "the same NaN JVP of an empty array's norm"),
    Known("cosine_similarity__zero_vectors_nan_gradient", ("nn.losses.cosine_similarity_loss",), "*", "non-finite",
          "at x1 = x2 = 0 the loss is x1.x2 / eps (gradient 0), but the norms' VJP at 0 is 0 / 0 and the "
          "maximum's unselected branch multiplies it by 0: NaN"),
    Known("irfft__jvp_odd_n_shape", ("mx.fft.irfft", "mx.fft.irfft2", "mx.fft.irfftn"), "identity*", "wrong shape",
          "the same short tangent, met by the identity check through mx.jvp"),
    Known("linalg_solve__vjp_a_raises", ("mx.linalg.solve",), "*vjp*", "raised",
          "solve factors a with LU and gathers with the pivots; its VJP for a differentiates that gather "
          "with respect to the pivot indices (LUF has no VJP either) and raises where the forward works"),
)


def explain(function: str, transform: str, symptom: str):
    """The declaration that explains a failing check (None: an unexplained finding)."""
    return next((k for k in KNOWN if k.matches(function, transform, symptom)), None)
