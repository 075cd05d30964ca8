"""The wire contract: method names, diagnostics and parameter types. Imports nothing else of ours."""
