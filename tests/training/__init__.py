"""Tests of training iterations (themis/training) and their hand-derived cases."""
