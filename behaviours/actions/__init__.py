"""Leaves that ask the robot to do something and watch it happen."""
