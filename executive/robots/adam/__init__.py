"""The PND Adam adapter (placeholder: the adapter is written separately; see interface.py)."""
