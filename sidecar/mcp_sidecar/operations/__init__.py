"""The operation table: one row per operation, and the fronts built from it."""
