"""edgecases."""
