"""The operator's and the mission author's commands: ``status``/``watch``/``start``..., the
authoring help, and the pictures (a run's timeline, a pose on the robot).
"""
