"""The host: owns the store and live sessions, serves JSON-RPC over carriers."""
