"""The simulated Atom: a separate process speaking the robot's wire types on the robot's topics."""
