"""The sweep (issue 30): MLX's whole public differentiable API, read from the installed
MLX (inventory), called through one explicit table (api), checked reference-free
under every transform at systematic corners."""
