"""Thin pygls handlers: parse typed params, call one service, return."""
