"""The Fourier Aurora's DDS wire on CycloneDDS 11 (``.venv-aurora`` only).

The Aurora speaks Fast DDS 3 with ``@appendable`` types in XCDR1; only cyclonedds 11.0.1,
configured with ``IgnoreTypeInformation`` for eProsima and writing XCDR1, meets it
(../shared/reference/robots.md 2.1a). One process loads one ``cyclonedds``: the service's
``.venv`` keeps 0.10.2 for the Atom and the Adam, so everything under this package runs in
``.venv-aurora`` (``make aurora-env``), in the adapter's child process, the simulated Aurora
and the tests' peers, and is never imported by the service itself (tests/aurora/
test_envs.py holds that).

- ``types``: the seed's types as measured (vendor client 0.1.8 and seed variants, ROS twins);
- ``config``: ``WireConfig`` (domain, namespace, ROS naming, variant, DDS config), the
  GR-3's groups and sizes, the FSM and group-state numbers;
- ``topics``: which type each topic carries, who writes it;
- ``qos``: the QoS that meets the vendor's endpoints;
- ``node``: ``AuroraNode``, a participant with readers and writers by topic name.
"""
