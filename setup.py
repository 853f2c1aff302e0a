"""The one thing pyproject.toml cannot say to setuptools 65 (the venv's, used by
``pip install -e . --no-build-isolation``): the native core's C extension (the e-stop
reflex, the gate and the joint stream of every DDS robot), one C unit per idea behind a
private header (``reflex.h`` lists them).

Built against Debian's CycloneDDS 0.10.2 (``cyclonedds-dev``, which ``make venv``
installs): headers in /usr/include, ``-lddsc``. Everything else is in pyproject.toml.
Without the extension the service still runs, on the Python fast path, and says so
(``executive/robots/native/__init__.py``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "executive.robots.native._reflex",
            sources=[
                f"executive/robots/native/{unit}.c"
                for unit in ("core", "trip", "gate", "diversion", "holds", "plan", "stream")
            ],
            depends=["executive/robots/native/reflex.h"],
            include_dirs=["/usr/include"],
            libraries=["ddsc"],
            extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wextra"],
        )
    ]
)
