# Sourced by the bench scripts: servers are started on a port the kernel picks
# and tell us which, never on a guessed "free" port (one probed and released
# can be taken before the server binds it).
#
#   memstored:  memstored ... -l 127.0.0.1:0 --port-file FILE   (FILE: the port)
#   memcached:  MEMCACHED_PORT_FILENAME=FILE memcached -p -1 ... (FILE: "TCP INET: PORT")
#
# Both files appear whole (written aside, then renamed) once the server
# accepts connections.

# wait_port_file FILE PID NAME: prints the port once FILE exists; fails if
# process PID exits first or nothing comes within 60 s. The files give
# nothing to block on, so this polls (20 ms) and checks PID at each step.
wait_port_file() {
  local file=$1 pid=$2 name=$3 i port
  for i in $(seq 1 3000); do
    if [ -s "$file" ]; then
      port=$(sed -n 's/^\(TCP INET: \)\{0,1\}\([0-9][0-9]*\)$/\2/p' "$file" | head -n1)
      if [ -n "$port" ]; then echo "$port"; return 0; fi
      echo "$name: port file $file says: $(cat "$file")" >&2
      return 1
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$name (pid $pid) exited before listening" >&2
      return 1
    fi
    sleep 0.02
  done
  echo "$name (pid $pid) reported no port within 60 s" >&2
  return 1
}

# The user a server runs as (`-u`): memcached and memstored refuse to run
# as root without `-u`, and memcached writes its port file after dropping
# privileges, so it must be able to write into our private work directory.
# The user running the script is both (as anyone but root, `-u` changes nothing).
server_user() { id -un; }
