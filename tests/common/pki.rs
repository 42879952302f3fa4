//! A test CA and its certificates, made with openssl for one test: what the trust tests
//! give the throwaway servers and perflab.
//!
//! Files in [`Pki::path`]:
//! - `ca.pem`: the CA; `other-ca.pem`: a CA that signed none of these;
//! - `server.pem`/`server.key`: for `localhost` only (so `127.0.0.1` is a wrong host name);
//! - `expired.pem`/`expired.key`: `localhost`, expired a day ago;
//! - `client.pem`/`client.key`: a client certificate with CN `certuser`.
//!
//! EC P-256 keys: quick to make, and every server here takes them.

use super::skip;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Pki {
    dir: PathBuf,
}

impl Pki {
    /// Makes the files, or `None` (a skip, or a failure under `PERFLAB_REQUIRE_SERVERS`) when
    /// openssl is missing.
    pub fn make(name: &str) -> Option<Pki> {
        let dir = std::env::temp_dir().join(format!("perflab-pki-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder for the test CA");
        let pki = Pki { dir };
        match pki.build() {
            Ok(()) => Some(pki),
            Err(e) => {
                skip::skip_or_fail(&format!("no test CA: {e}"), "openssl");
                None
            }
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn build(&self) -> Result<(), String> {
        self.ca("ca", "perflab test CA")?;
        self.ca("other-ca", "someone else's CA")?;
        self.leaf("server", "localhost", "subjectAltName = DNS:localhost", "1")?;
        self.leaf(
            "expired",
            "localhost",
            "subjectAltName = DNS:localhost",
            "-1",
        )?;
        self.leaf("client", "certuser", "extendedKeyUsage = clientAuth", "1")?;
        // Keys private, as servers and perflab insist.
        for key in ["ca", "other-ca", "server", "expired", "client"] {
            set_mode(&self.path(&format!("{key}.key")), 0o600);
        }
        Ok(())
    }

    fn ca(&self, name: &str, cn: &str) -> Result<(), String> {
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            &self.file(&format!("{name}.key")),
            "-out",
            &self.file(&format!("{name}.pem")),
        ])
    }

    /// A certificate for `cn` signed by `ca`, valid for `days` (negative: expired).
    fn leaf(&self, name: &str, cn: &str, extension: &str, days: &str) -> Result<(), String> {
        let ext = self.path(&format!("{name}.ext"));
        std::fs::write(&ext, format!("basicConstraints = CA:FALSE\n{extension}\n"))
            .map_err(|e| e.to_string())?;
        openssl(&[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            &self.file(&format!("{name}.key")),
            "-out",
            &self.file(&format!("{name}.csr")),
        ])?;
        openssl(&[
            "x509",
            "-req",
            "-in",
            &self.file(&format!("{name}.csr")),
            "-CA",
            &self.file("ca.pem"),
            "-CAkey",
            &self.file("ca.key"),
            "-set_serial",
            &format!("{}", name.len() + 100),
            "-days",
            days,
            "-extfile",
            &ext.display().to_string(),
            "-out",
            &self.file(&format!("{name}.pem")),
        ])
    }

    fn file(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    /// Makes every file readable by `uid`/`gid` (a server that runs as another user), keys
    /// still private to it.
    pub fn give_to(&self, uid: u32, gid: u32) {
        for entry in std::fs::read_dir(&self.dir)
            .expect("the CA folder")
            .flatten()
        {
            let _ = std::os::unix::fs::chown(entry.path(), Some(uid), Some(gid));
        }
        let _ = std::os::unix::fs::chown(&self.dir, Some(uid), Some(gid));
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

fn openssl(args: &[&str]) -> Result<(), String> {
    let out = Command::new("openssl")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run openssl: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {}: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
