"""Configuration: files, scopes, trust, validation and interpolation."""
