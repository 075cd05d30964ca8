"""The behaviour of the spec: no pygls here, and no SDK (that lives in connections/)."""
