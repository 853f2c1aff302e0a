"""Atom mission executive: YAML missions as py_trees behaviour trees driving a Dobot Atom over DDS."""

__version__ = "0.1.0"
