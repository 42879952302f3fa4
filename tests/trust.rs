//! Trust: perflab verifies the servers' certificates where the user asks (PostgreSQL's
//! `verify-ca` and `verify-full`, `rediss://` by default), sends client certificates to
//! servers that require them, and resolves PostgreSQL connections as libpq does (key=value
//! strings, the `PG*` variables). Real servers with certificates from a test CA made with
//! openssl in the test; every refusal is one line naming the fix.

mod common;

use common::pki::Pki;
use common::servers::{MariaDbServer, PgServer, RedisServer, pg_program};
use common::{Results, json, stderr};
use std::process::{Command, Output};

/// perflab with extra environment variables (and `PG*` cleared, so the machine's own do
/// not leak into the test).
fn perflab_env(results: &Results, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.args(args)
        .arg("--results")
        .arg(results.path())
        .env("NO_COLOR", "1");
    for (k, _) in std::env::vars() {
        if k.starts_with("PG") {
            c.env_remove(k);
        }
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the perflab binary runs")
}

/// A short select-only oltp run on `target`.
fn oltp(r: &Results, target: &str, env: &[(&str, &str)]) -> Output {
    perflab_env(
        r,
        &[
            "oltp",
            "--json",
            "--target",
            target,
            "--select-only",
            "--clients",
            "1",
            "--warmup",
            "0s",
            "--duration",
            "100ms",
        ],
        env,
    )
}

/// The one line of a refusal (exit 2), which must hold every piece of `expect`.
#[track_caller]
fn refused(o: &Output, expect: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    for piece in expect {
        assert!(e.contains(piece), "{piece:?} in: {e}");
    }
}

#[track_caller]
fn passed(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    let v = json(o);
    assert_eq!(v["status"], "complete");
    v
}

/// The record's `tls` setting.
fn tls_setting(v: &serde_json::Value) -> String {
    v["settings"]
        .as_array()
        .and_then(|s| s.iter().find(|x| x["name"] == "tls"))
        .and_then(|x| x["value"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn postgres_verifies_as_libpq_does_and_sends_client_certificates() {
    let Some(pki) = Pki::make("pg") else { return };
    let Some(pg) = PgServer::start_tls(&pki) else {
        return;
    };
    let r = Results::new("trust-pg");
    let port = pg.port();
    let ca = pki.path("ca.pem").display().to_string();
    let url = |host: &str, q: &str| format!("postgres://postgres@{host}:{port}/postgres?{q}");

    // verify-full against the right CA and the certificate's host name.
    let v = passed(&oltp(
        &r,
        &url(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        &[],
    ));
    let tls = tls_setting(&v);
    assert!(
        tls.starts_with("sslmode=verify-full: verified: chain to ") && tls.ends_with("host name"),
        "{tls}"
    );
    // The certificate is for localhost: 127.0.0.1 is the wrong name for verify-full...
    refused(
        &oltp(
            &r,
            &url(
                "127.0.0.1",
                &format!("sslmode=verify-full&sslrootcert={ca}"),
            ),
            &[],
        ),
        &["not trusted", "not for 127.0.0.1", "sslmode=require"],
    );
    // ... and fine for verify-ca, which checks the chain only.
    let v = passed(&oltp(
        &r,
        &url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}")),
        &[],
    ));
    assert!(tls_setting(&v).contains("host name not checked"));
    // Another CA: unknown issuer.
    let other = pki.path("other-ca.pem").display().to_string();
    refused(
        &oltp(
            &r,
            &url(
                "localhost",
                &format!("sslmode=verify-full&sslrootcert={other}"),
            ),
            &[],
        ),
        &["unknown issuer", "sslrootcert=FILE"],
    );
    // sslrootcert=system: the system's roots, here the test CA through SSL_CERT_FILE.
    passed(&oltp(
        &r,
        &url("localhost", "sslrootcert=system"),
        &[("SSL_CERT_FILE", &ca)],
    ));
    refused(
        &oltp(
            &r,
            &url("localhost", "sslrootcert=system&sslmode=require"),
            &[],
        ),
        &["use sslmode=verify-full"],
    );

    // A key=value string, the rest from the environment, as libpq takes them.
    let port_text = port.to_string();
    let v = passed(&oltp(
        &r,
        "host=localhost dbname=postgres sslmode=verify-full",
        &[
            ("PGPORT", &port_text),
            ("PGUSER", "postgres"),
            ("PGSSLROOTCERT", &ca),
            ("PGSSLMODE", "disable"),
        ],
    ));
    // What the environment filled in is in the record; the string's sslmode won.
    assert_eq!(
        v["spec"]["target"],
        format!(
            "postgres://postgres@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={ca}"
        )
    );
    // The environment alone makes no PostgreSQL target of a default run: oltp's own
    // SQLite database is measured.
    let v = passed(&perflab_env(
        &r,
        &[
            "oltp",
            "--json",
            "--select-only",
            "--clients",
            "1",
            "--warmup",
            "0s",
            "--duration",
            "100ms",
        ],
        &[("PGHOST", "localhost"), ("PGPORT", &port_text)],
    ));
    assert!(
        v["spec"]["target"]
            .as_str()
            .unwrap()
            .starts_with("sqlite://")
    );

    // A role the server lets in only with a client certificate for it.
    let psql = pg_program("psql").expect("psql beside initdb");
    let made = Command::new(psql)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port_text,
            "-U",
            "postgres",
            "-d",
            "postgres",
        ])
        .args(["-c", "CREATE ROLE certuser LOGIN SUPERUSER"])
        .env("PGSSLMODE", "disable")
        .output()
        .expect("psql runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let as_certuser = |q: &str| {
        format!(
            "postgres://certuser@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={ca}{q}"
        )
    };
    let o = oltp(&r, &as_certuser(""), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("certificate"), "{}", stderr(&o));
    let (cert, key) = (pki.path("client.pem"), pki.path("client.key"));
    let v = passed(&oltp(
        &r,
        &as_certuser(&format!(
            "&sslcert={}&sslkey={}",
            cert.display(),
            key.display()
        )),
        &[],
    ));
    assert!(
        tls_setting(&v).contains("client certificate"),
        "{}",
        tls_setting(&v)
    );
    // A key others may read is refused, as libpq refuses it.
    let loose = r.path().with_extension("loose.key");
    std::fs::copy(&key, &loose).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    refused(
        &oltp(
            &r,
            &as_certuser(&format!(
                "&sslcert={}&sslkey={}",
                cert.display(),
                loose.display()
            )),
            &[],
        ),
        &["may be read by others", "chmod 600"],
    );
    let _ = std::fs::remove_file(&loose);

    // An expired certificate.
    pg.serve_certificate(&pki, "expired");
    refused(
        &oltp(
            &r,
            &url(
                "localhost",
                &format!("sslmode=verify-full&sslrootcert={ca}"),
            ),
            &[],
        ),
        &["expired"],
    );
    // require encrypts and checks nothing, as libpq's require without a root file.
    let v = passed(&oltp(&r, &url("localhost", "sslmode=require"), &[]));
    assert!(
        tls_setting(&v).contains("not verified"),
        "{}",
        tls_setting(&v)
    );
}

/// A short kv run on `target` with `extra` options.
fn kv(r: &Results, target: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "kv",
        "--json",
        "--target",
        target,
        "--clients",
        "1",
        "--key-maximum",
        "99",
        "--warmup",
        "0s",
        "--duration",
        "100ms",
    ];
    args.extend_from_slice(extra);
    perflab_env(r, &args, &[])
}

#[test]
fn rediss_verifies_by_default_and_sends_client_certificates() {
    let Some(pki) = Pki::make("redis") else {
        return;
    };
    let Some(redis) = RedisServer::start_tls_with(&pki) else {
        return;
    };
    let r = Results::new("trust-redis");
    let port = redis.tls_port().expect("a TLS port");
    let at = |host: &str| format!("rediss://{host}:{port}");
    let file = |n: &str| pki.path(n).display().to_string();
    let (ca, cert, key) = (file("ca.pem"), file("client.pem"), file("client.key"));
    let client = ["--cert", cert.as_str(), "--key", key.as_str()];

    let v = passed(&kv(
        &r,
        &at("localhost"),
        &[&["--cacert", ca.as_str()][..], &client[..]].concat(),
    ));
    assert!(
        v["spec"]["tls"]
            .as_str()
            .unwrap()
            .contains("and host name; client certificate"),
        "{}",
        v["spec"]["tls"]
    );
    // The default: the system's roots, which do not hold the test CA. The line names
    // --insecure, which then works.
    refused(
        &kv(&r, &at("localhost"), &client),
        &["unknown issuer", "--cacert FILE", "--insecure"],
    );
    let v = passed(&kv(
        &r,
        &at("localhost"),
        &[&["--insecure"][..], &client[..]].concat(),
    ));
    assert!(v["spec"]["tls"].as_str().unwrap().contains("not verified"));
    // Wrong host name, wrong CA.
    refused(
        &kv(
            &r,
            &at("127.0.0.1"),
            &[&["--cacert", ca.as_str()][..], &client[..]].concat(),
        ),
        &["not for 127.0.0.1"],
    );
    let other = file("other-ca.pem");
    refused(
        &kv(
            &r,
            &at("localhost"),
            &[&["--cacert", other.as_str()][..], &client[..]].concat(),
        ),
        &["unknown issuer"],
    );
    // The server requires a client certificate (tls-auth-clients yes).
    refused(
        &kv(&r, &at("localhost"), &["--cacert", ca.as_str()]),
        &["client certificate", "--cert FILE --key FILE"],
    );
    // TLS options without TLS.
    refused(&kv(&r, &redis.url(), &["--insecure"]), &["not rediss://"]);
    // An expired certificate.
    redis.serve_certificate(&pki, "expired");
    refused(
        &kv(
            &r,
            &at("localhost"),
            &[&["--cacert", ca.as_str()][..], &client[..]].concat(),
        ),
        &["expired"],
    );
}

#[test]
fn mariadb_verifies_in_its_modes_and_sends_client_certificates() {
    let Some(pki) = Pki::make("mariadb") else {
        return;
    };
    let Some(db) = MariaDbServer::start_tls_with(&pki) else {
        return;
    };
    let r = Results::new("trust-mariadb");
    let port = db.port();
    let file = |n: &str| pki.path(n).display().to_string();
    let (ca, cert, key) = (file("ca.pem"), file("client.pem"), file("client.key"));
    // A user the server lets in only with a client certificate its CA signed.
    let client = common::skip::find_program("mariadb")
        .or_else(|| common::skip::find_program("mysql"))
        .expect("the mariadb client beside the server");
    let made = Command::new(&client)
        .args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", "root"])
        .args([
            "-e",
            "CREATE DATABASE IF NOT EXISTS test; CREATE USER certuser@'%' REQUIRE X509; GRANT ALL ON *.* TO certuser@'%'",
        ])
        .output()
        .expect("the mariadb client runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let url = |host: &str, q: &str| format!("mysql://certuser@{host}:{port}/test?{q}");
    let with_cert = format!("&ssl-cert={cert}&ssl-key={key}");
    let v = passed(&oltp(
        &r,
        &url(
            "localhost",
            &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}{with_cert}"),
        ),
        &[],
    ));
    let tls = tls_setting(&v);
    assert!(
        tls.starts_with("ssl-mode=VERIFY_IDENTITY: verified") && tls.contains("client certificate"),
        "{tls}"
    );
    // Without the client certificate, the server says no.
    let o = oltp(
        &r,
        &url(
            "localhost",
            &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
        ),
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    // The wrong host name for VERIFY_IDENTITY, fine for VERIFY_CA; another CA.
    refused(
        &oltp(
            &r,
            &url(
                "127.0.0.1",
                &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}{with_cert}"),
            ),
            &[],
        ),
        &["not for 127.0.0.1", "ssl-mode=REQUIRED"],
    );
    passed(&oltp(
        &r,
        &url(
            "127.0.0.1",
            &format!("ssl-mode=VERIFY_CA&ssl-ca={ca}{with_cert}"),
        ),
        &[],
    ));
    let other = file("other-ca.pem");
    refused(
        &oltp(
            &r,
            &url(
                "localhost",
                &format!("ssl-mode=VERIFY_CA&ssl-ca={other}{with_cert}"),
            ),
            &[],
        ),
        &["unknown issuer", "ssl-ca=FILE"],
    );
    // An expired certificate, loaded by FLUSH SSL.
    for (from, to) in [("expired.pem", "server.pem"), ("expired.key", "server.key")] {
        std::fs::copy(pki.path(from), db.dir().join(to)).unwrap();
    }
    let flushed = Command::new(&client)
        .args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", "root"])
        .args(["-e", "FLUSH SSL"])
        .output()
        .expect("the mariadb client runs");
    assert!(
        flushed.status.success(),
        "{}",
        String::from_utf8_lossy(&flushed.stderr)
    );
    refused(
        &oltp(
            &r,
            &url(
                "localhost",
                &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}{with_cert}"),
            ),
            &[],
        ),
        &["expired"],
    );
}

#[test]
fn mail_tls_verifies_by_default() {
    use perflab::workload::mail::server::Throwaway;
    let Some(pki) = Pki::make("mail") else {
        return;
    };
    // A Dovecot perflab does not own in this run, with TLS: its certificate is signed by a
    // CA made for it, which the client must be told of.
    let users = vec![("box1".to_string(), "secret-1-pw".to_string())];
    let server = match Throwaway::start_with(&users, true) {
        Ok(s) => s,
        Err(e) => {
            common::skip::skip_or_fail(&e, "dovecot-imapd dovecot-pop3d dovecot-lmtpd");
            return;
        }
    };
    let r = Results::new("trust-mail");
    std::fs::create_dir_all(r.path()).unwrap();
    let users_file = r.path().join("users.txt");
    std::fs::write(&users_file, "box1:secret-1-pw\n").unwrap();
    let ca = server.ca_certificate().expect("a CA with TLS");
    let (imaps, pop3s, lmtp) = (
        format!("imaps://localhost:{}", server.imaps().port()),
        format!("pop3s://localhost:{}", server.pop3s().port()),
        format!("lmtp://localhost:{}", server.lmtp().port()),
    );
    // One user's short run, with the servers named by `host` (the certificate's name, or
    // an address it does not carry).
    let run_at = |host: &str, extra: &[&str]| {
        let at = |u: &String| u.replace("localhost", host);
        let (imaps, pop3s, lmtp) = (at(&imaps), at(&pop3s), at(&lmtp));
        let mut args = vec![
            "mail",
            "--json",
            "--target",
            &imaps,
            "--pop3",
            &pop3s,
            "--smtp",
            &lmtp,
            "--users-file",
            users_file.to_str().unwrap(),
            "--users",
            "1",
            "--warmup",
            "0s",
            "--duration",
            "300ms",
        ];
        args.extend_from_slice(extra);
        perflab_env(&r, &args, &[])
    };
    let run = |extra: &[&str]| run_at("localhost", extra);
    refused(
        &run(&[]),
        &["unknown issuer", "--cacert FILE", "--insecure"],
    );
    let other = pki.path("other-ca.pem").display().to_string();
    refused(&run(&["--cacert", &other]), &["unknown issuer"]);
    let v = passed(&run(&["--cacert", ca.to_str().unwrap()]));
    let client = v["spec"]["tls_settings"]["client"].as_str().unwrap();
    assert!(client.starts_with("verified: chain to "), "{client}");
    let v = passed(&run(&["--insecure"]));
    let client = v["spec"]["tls_settings"]["client"].as_str().unwrap();
    assert!(
        client.starts_with("encrypted, the server's certificate not verified"),
        "{client}"
    );
    // The server's certificate replaced by the test CA's (for localhost only), then by an
    // expired one; Dovecot rereads them on SIGHUP.
    let dir = ca.parent().expect("the throwaway's folder").to_path_buf();
    let serve = |name: &str| {
        std::fs::copy(pki.path(&format!("{name}.pem")), dir.join("cert.pem")).unwrap();
        std::fs::copy(pki.path(&format!("{name}.key")), dir.join("key.pem")).unwrap();
        let pid = server.pid().expect("Dovecot runs");
        let _ = Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status();
        std::thread::sleep(std::time::Duration::from_millis(1500));
    };
    serve("server");
    let test_ca = pki.path("ca.pem").display().to_string();
    passed(&run(&["--cacert", &test_ca]));
    refused(
        &run_at("127.0.0.1", &["--cacert", &test_ca]),
        &["not for 127.0.0.1"],
    );
    serve("expired");
    refused(&run(&["--cacert", &test_ca]), &["expired"]);
    // Without TLS the options mean nothing: one line.
    refused(
        &perflab_env(
            &r,
            &[
                "mail",
                "--target",
                &format!("imap://localhost:{}", server.imap().port()),
                "--users-file",
                users_file.to_str().unwrap(),
                "--users",
                "1",
                "--insecure",
            ],
            &[],
        ),
        &["are for TLS"],
    );
}
