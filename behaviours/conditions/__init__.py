"""Leaves that check or wait for a condition of the robot or its operator."""
