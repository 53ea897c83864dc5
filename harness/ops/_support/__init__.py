"""Building blocks shared by op modules (numpy only; hypothesis only when
drawing). Op modules import from here, never from each other:

  gather     gather index machinery: defaulted and broadcast index arrays,
             the float64 gather-matmul rule, index plans for strategies
  quantized  affine dequantization from exact codes and its chain rule
  lanes      scans and sorts along one axis: lanes, layouts, distinct values
  scatter    .at[] updates and slices: index forms, update shapes, slices
  sorting    the canonical sort/top-k/partition reference and its strategies
  reductions reduced axes, groups that are not empty, -inf handling
  fast       the mx.fast ops: float32-only fuzzing, the norms' rows, weight and bias
"""
