"""The simulator kit: what every simulated robot shares, so a new one is only its robot.

A simulator built on it (``executive.robots.atom.sim``, ``executive.robots.adam.sim``) writes
its wire, its models and the rules its robot obeys, and gets the rest the same as every
other sim, so tests, demos and tools drive them alike:

- ``scheduler``: one thread, many periodic jobs on monotonic deadlines, no drift;
- ``joints``: joints that move toward commanded targets at bounded speed, commands checked
  whole as a careful firmware would (``Verdict``), counted (``Counters``);
- ``battery``: a pack that drains, charges and can be forced to a level;
- ``faults``: the fault-spec syntax ``KIND[:TARGET][=VALUE][@SECONDS]`` and the book of
  active faults (each robot validates a spec against its own kinds);
- ``topics``: the sim's own fault and status topics' QoS and the fault request type;
- ``node``: ``SimNode``, the sim's side of those topics (requests applied once, refused
  with a reason, status on change), the command record, polling readers, run/stop/close;
- ``record``: the command record (``Recorder``) and its reader (``Recording``), so a test
  asserts what a controller *sent*;
- ``client``: the client of a sim's fault and status topics (``Client``);
- ``cli``: the options every sim has, its JSON log on stderr, and running until a signal.
"""
