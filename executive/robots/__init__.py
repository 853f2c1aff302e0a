"""The robots: one folder each (an adapter, its wire, its simulator), plus what the DDS robots
share (``native``: the e-stop reflex and the joint stream in C) and what the simulators share
(``simkit``). What a robot is, and how one is opened, is the seam's (``executive.seam``).
"""
