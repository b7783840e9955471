# Sourced by the packaging scripts: one packaging run at a time in this checkout (dist/ and
# build/ are shared), so a second run waits for the first. Needs `log` defined first.
if [ "${FORKWISE_PACKAGING_LOCK_HELD:-}" != 1 ]; then
  mkdir -p build
  exec 8>build/.packaging.lock
  flock -n 8 || { log "waiting for another packaging run in this checkout"; flock 8; }
  export FORKWISE_PACKAGING_LOCK_HELD=1
fi
