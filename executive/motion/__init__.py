"""Motion: smooth trajectories and the fixed-rate streamer that turns them into joint commands."""
