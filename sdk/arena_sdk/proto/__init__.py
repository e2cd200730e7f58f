"""Generated from proto/arena/v1/arena.proto by scripts/gen_proto. Do not edit."""
