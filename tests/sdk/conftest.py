"""The SDK tests import arena_sdk from sdk/ when it is not installed (it needs only grpcio and
protobuf), so they also check the SDK works as its own package."""

import pathlib
import sys

SDK = pathlib.Path(__file__).resolve().parents[2] / "sdk"
if str(SDK) not in sys.path:
    sys.path.insert(0, str(SDK))
