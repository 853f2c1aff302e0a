"""Leaves of Atom missions: control authority, FSM, joint poses, hand gestures, base navigation."""
