#!/usr/bin/env bash
# perflab mail against postal (LMTP delivery) and rabid (POP3 sessions), Debian's `postal`
# package, on one Dovecot started here, alternating, at equal connections.
#   scripts/bench-mail.sh [ROUNDS] [SECONDS] [CONNECTIONS]
# Delivery: 100 users, one message per connection, postal's bodies of 0 to 10 KB (mean 5 KB)
# against perflab's 5 KB messages, as fast as each goes. POP3: 100 users with 20 messages
# each, every message retrieved, none deleted (rabid -d 100:0, perflab --pop3-deletes 0).
# Both tools' rates are counted the same way, by the server: messages by the files in the
# maildirs, sessions by Dovecot's login lines. Client CPU is user + system of the whole
# client process (perflab's includes its start, and the scan after its step that fetches
# and compares every message it sent: it is also given for its measure phase alone).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-2}
SECS=${2:-30}
CONN=${3:-4}
need() { command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] || { echo "$1 not found: apt-get install $2" >&2; exit 2; }; }
if [ "$(id -u)" = 0 ] && { ! [ -x /usr/sbin/postal ] || ! [ -x /usr/lib/dovecot/lmtp ] || ! [ -x /usr/bin/time ]; }; then
  apt-get install -y -qq dovecot-core dovecot-imapd dovecot-pop3d dovecot-lmtpd postal time >/dev/null
fi
need dovecot dovecot-core; need postal postal; need rabid postal
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: apt-get install time" >&2; exit 2; }
cargo build --release --quiet
PERFLAB=$PWD/target/release/perflab
work=$(mktemp -d)
chmod 755 "$work"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
IMAP=$(free_port); POP3=$(free_port); LMTP=$(free_port)
if [ "$(id -u)" = 0 ]; then owner=nobody; group=nogroup; else owner=$(id -un); group=$(id -gn); fi
mkdir -p "$work/run" "$work/state" "$work/mail"
chown "$owner:$group" "$work/mail"
USERS=100
for i in $(seq 1 $USERS); do
  echo "user$i:{PLAIN}pw$i" >>"$work/passwd"
  echo "user$i@perflab.test" >>"$work/postal-users"
  echo "user$i@perflab.test pw$i" >>"$work/rabid-users"
  echo "user$i:pw$i" >>"$work/perflab-users"
done
# The throwaway configuration perflab's own Dovecot gets (src/workload/mail/server.rs),
# with postal's envelope accepted (it writes "MAIL FROM: <x>") and logins logged.
cat >"$work/dovecot.conf" <<EOF
base_dir = $work/run
state_dir = $work/state
log_path = $work/log
info_log_path = $work/info.log
instance_name = perflab-bench-$IMAP
protocols = imap pop3 lmtp
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_username_format = %Ln
default_internal_user = $owner
default_internal_group = $group
default_login_user = $owner
mail_location = maildir:$work/mail/%n
mail_uid = $owner
mail_gid = $group
first_valid_uid = 0
mail_fsync = optimized
default_process_limit = 1000
default_client_limit = 4000
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%n $work/passwd
}
userdb {
  driver = static
  args = uid=$owner gid=$group home=$work/mail/%n
}
service imap-login {
  inet_listener imap {
    port = $IMAP
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    port = $POP3
  }
  inet_listener pop3s {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    port = $LMTP
  }
}
protocol lmtp {
  postmaster_address = postmaster@perflab.test
  lmtp_client_workarounds = whitespace-before-path
}
EOF
dovecot -F -c "$work/dovecot.conf" &
DPID=$!
trap 'kill $DPID 2>/dev/null || true; sleep 0.5; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1',$IMAP),1)" 2>/dev/null && break
  sleep 0.1
done
TARGET=(--target "imap://127.0.0.1:$IMAP" --smtp "lmtp://127.0.0.1:$LMTP" --pop3 "pop3://127.0.0.1:$POP3"
  --users-file "$work/perflab-users" --users $USERS --watchers 0 --quiet --json --results "$work/res")
# Only sending: a rate above what the server can take (833 sessions/s), so the connections
# never idle.
SEND=(--sent-per-day 200000 --imap-checks-per-day 0 --imap-syncs-per-day 0 --pop3-per-day 0
  --recipients 1 --message-size 5k)
# Only POP3 sessions (a trickle of sending, which the profile needs).
READ=(--sent-per-day 0.001 --imap-checks-per-day 0 --imap-syncs-per-day 0 --pop3-per-day 200000
  --pop3-users 1 --pop3-retrieve 5)
messages() { find "$work/mail" -type f \( -path '*/new/*' -o -path '*/cur/*' \) | wc -l; }
logins() { grep -c 'pop3-login: Info: Login' "$work/info.log" || true; }
# Messages the POP3 sessions retrieved, from Dovecot's "retr=N/BYTES" at each logout.
retrieved() { { grep -o 'retr=[0-9]*' "$work/info.log" || true; } | awk -F= '{n += $2} END {print n + 0}'; }
# The last line: a killed client's line comes after "Command terminated by signal 9".
cpu() { tail -1 "$1" | awk '{print $1 + $2}'; }
# Runs a peer that never stops by itself (postal, rabid) for SECS seconds; its CPU time, with
# its threads and its forked children's, read from /proc just before it is killed, goes to
# $work/cpu as "user system".
run_for() {
  local secs=$1; shift
  "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep "$secs"
  python3 - "$pid" >"$work/cpu" <<'PY'
import os, sys
def tree(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    u, s = int(f[11]) / 100, int(f[12]) / 100
    for t in os.listdir(f"/proc/{pid}/task"):
        for c in open(f"/proc/{pid}/task/{t}/children").read().split():
            cu, cs = tree(c)
            u, s = u + cu, s + cs
    return u, s
print(*tree(sys.argv[1]))
PY
  pkill -KILL -P "$pid" 2>/dev/null || true
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
# A perflab run that found mail lost says so, with its check.
failed() {
  python3 - "$1" <<'PY' >&2
import json, sys
for s in json.load(open(sys.argv[1]))["steps"]:
    for c in s["checks"]:
        if not c["passed"]:
            print("perflab:", c["name"], c["summary"], c["figures"])
PY
}
# 100 messages of 5 KB in every mailbox before each POP3 run, written as Dovecot's maildir
# holds delivered mail (the mailboxes are the script's own Dovecot's; it rescans them at the
# next login).
refill() {
  python3 - "$work/mail" "$USERS" "$owner" <<'PY'
import os, pwd, grp, shutil, sys
root, users, owner = sys.argv[1], int(sys.argv[2]), sys.argv[3]
uid = pwd.getpwnam(owner).pw_uid
gid = pwd.getpwnam(owner).pw_gid
body = ("x" * 70 + "\n") * 70
for u in range(1, users + 1):
    home = os.path.join(root, f"user{u}")
    for sub in ("cur", "new", "tmp"):
        d = os.path.join(home, sub)
        os.makedirs(d, exist_ok=True)
        os.chown(d, uid, gid)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
    os.chown(home, uid, gid)
    for m in range(100):
        p = os.path.join(home, "new", f"1700000000.R{u}Q{m}.bench")
        with open(p, "w") as f:
            f.write(f"From: a@perflab.test\nTo: user{u}@perflab.test\nSubject: m{m}\n\n{body}")
        os.chown(p, uid, gid)
PY
}

declare -A sum
add() { sum[$1]=$(python3 -c "print(${sum[$1]:-0} + $2)"); }
for round in $(seq 1 "$ROUNDS"); do
  run_postal() {
    local before; before=$(messages)
    # postal writes postal.log into its working directory: keep it in the scratch one.
    (cd "$work" && run_for "$SECS" postal -t "$CONN" -c 1 -m 10 -L "[127.0.0.1]$LMTP" "$work/postal-users")
    local n=$(( $(messages) - before ))
    add postal.msgs "$n"; add postal.cpu "$(cpu "$work/cpu")"
  }
  run_perflab_send() {
    local before; before=$(messages)
    /usr/bin/time -f "%U %S" -o "$work/cpu" "$PERFLAB" mail "${TARGET[@]}" "${SEND[@]}" \
      --threads "$CONN" --warmup 0s --duration "${SECS}s" >"$work/send.json" || failed "$work/send.json"
    local n=$(( $(messages) - before ))
    add perflab.msgs "$n"; add perflab.cpu "$(cpu "$work/cpu")"
    add perflab.measure_cpu "$(python3 -c "import json; t=json.load(open('$work/send.json'))['steps'][0]['trials'][0]; print(t['resources']['process_cpu_ns_per_op'] * t['ops'] / 1e9)")"
  }
  run_rabid() {
    refill
    local before; before=$(logins)
    local got; got=$(retrieved)
    (cd "$work" && run_for "$SECS" rabid -p "$CONN" -c 5 "[127.0.0.1]$POP3" "$work/rabid-users")
    local n=$(( $(logins) - before ))
    add rabid.sessions "$n"; add rabid.cpu "$(cpu "$work/cpu")"; add rabid.retr $(( $(retrieved) - got ))
  }
  run_perflab_read() {
    refill
    local before; before=$(logins)
    local got; got=$(retrieved)
    /usr/bin/time -f "%U %S" -o "$work/cpu" "$PERFLAB" mail "${TARGET[@]}" "${READ[@]}" \
      --threads "$CONN" --warmup 0s --duration "${SECS}s" >"$work/read.json" || failed "$work/read.json"
    local n=$(( $(logins) - before ))
    add perflab.sessions "$n"; add perflab.read_cpu "$(cpu "$work/cpu")"; add perflab.retr $(( $(retrieved) - got ))
  }
  if (( round % 2 )); then run_perflab_send; run_postal; run_perflab_read; run_rabid
  else run_postal; run_perflab_send; run_rabid; run_perflab_read; fi
  echo "round $round done" >&2
done
python3 - "$ROUNDS" "$SECS" "$CONN" <<EOF
import sys
rounds, secs, conn = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
s = {k: float(v) for k, v in [$(for k in "${!sum[@]}"; do printf "('%s', %s)," "$k" "${sum[$k]}"; done)]}
t = rounds * secs
pm, qm = s['perflab.msgs'] / t * 60, s['postal.msgs'] / t * 60
ps, rs = s['perflab.sessions'] / t * 60, s['rabid.sessions'] / t * 60
print(f"{conn} connections, {rounds} rounds of {secs:.0f} s, counted by the server")
print(f"LMTP delivery   perflab {pm:9.0f} msgs/min   postal {qm:9.0f} msgs/min   ratio {pm/qm:.2f}")
print(f"  client CPU    perflab {s['perflab.cpu']/s['perflab.msgs']*1e6:7.0f} us/msg (measure phase {s['perflab.measure_cpu']/s['perflab.msgs']*1e6:.0f})   postal {s['postal.cpu']/s['postal.msgs']*1e6:7.0f} us/msg")
print(f"POP3 sessions   perflab {ps:9.0f} sessions/min   rabid {rs:9.0f} sessions/min   ratio {ps/rs:.2f}")
print(f"  messages retrieved per session: perflab {s['perflab.retr']/s['perflab.sessions']:.1f}   rabid {s['rabid.retr']/s['rabid.sessions']:.1f}")
print(f"  retrieved     perflab {s['perflab.retr']/t*60:9.0f} msgs/min       rabid {s['rabid.retr']/t*60:9.0f} msgs/min       ratio {s['perflab.retr']/s['rabid.retr']:.2f}")
print(f"  client CPU    perflab {s['perflab.read_cpu']/s['perflab.retr']*1e6:7.0f} us/msg retrieved   rabid {s['rabid.cpu']/s['rabid.retr']*1e6:7.0f} us/msg retrieved")
EOF
