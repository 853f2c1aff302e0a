"""What a run leaves behind: the JSON-lines run record, the run as Foxglove channels (an MCAP
file per run and the opt-in live view), and the taps on what the executive sends.
"""
