# Sourced by scripts/*.sh: `apt_ensure COMMAND PACKAGE [COMMAND PACKAGE ...]`
# installs from Debian each PACKAGE whose COMMAND is not on the PATH (needs
# root), with `apt-get update` once if the install fails. Installed
# packages would start their own servers (nginx, prometheus on every
# interface): invoke-rc.d is kept from starting anything, as container
# images do, by a policy-rc.d that is removed again if it was made here.
apt_ensure() {
  local missing=()
  while (( $# >= 2 )); do
    command -v "$1" >/dev/null 2>&1 || missing+=("$2")
    shift 2
  done
  (( ${#missing[@]} )) || return 0
  echo "installing from Debian: ${missing[*]}"
  local made_policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
  fi
  local rc=0
  _apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
  _apt_install "${missing[@]}" || { apt-get update -q >/dev/null && _apt_install "${missing[@]}"; } || rc=$?
  [[ -n "$made_policy" ]] && rm -f /usr/sbin/policy-rc.d
  return "$rc"
}
