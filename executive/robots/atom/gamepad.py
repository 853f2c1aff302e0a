"""The operator's gamepad as the robot reports it: ``wireless_remote[40]`` in upper and lower state.

Layout (seed 000, DESIGN.md 3.3): byte 2 bits high to low ``'', '', LT, RT, SELECT, START,
LB, RB``; byte 3 ``LEFT, DOWN, RIGHT, UP, Y, X, B, A``; bytes 4-7 LX, 8-11 RX, 12-15 RY,
16-19 LY as little-endian float32. The sim "presses" buttons and moves sticks through the
BUTTON and STICK faults (so missions that wait for the operator can run unattended); the
wait_for_button leaf reads buttons with the same table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

SIZE = 40
BUTTONS: dict[str, tuple[int, int]] = {  # name -> (byte, bit)
    "LT": (2, 5),
    "RT": (2, 4),
    "SELECT": (2, 3),
    "START": (2, 2),
    "LB": (2, 1),
    "RB": (2, 0),
    "LEFT": (3, 7),
    "DOWN": (3, 6),
    "RIGHT": (3, 5),
    "UP": (3, 4),
    "Y": (3, 3),
    "X": (3, 2),
    "B": (3, 1),
    "A": (3, 0),
}
STICKS: dict[str, int] = {"LX": 4, "RX": 8, "RY": 12, "LY": 16}  # name -> first byte


def encode(buttons: set[str], sticks: Mapping[str, float]) -> npt.NDArray[np.uint8]:
    """The 40 bytes showing ``buttons`` held and ``sticks`` (name -> -1..1) deflected."""
    data = np.zeros(SIZE, dtype=np.uint8)
    for name in buttons:
        byte, bit = BUTTONS[name]
        data[byte] |= 1 << bit
    for name, value in sticks.items():
        start = STICKS[name]
        data[start : start + 4] = np.frombuffer(np.float32(value).astype("<f4").tobytes(), np.uint8)
    return data
