//! Where and how to connect, as psql would: a `postgres://` URL, completed
//! by libpq's environment variables (`PGHOST`, `PGPORT`, `PGUSER`,
//! `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`, `PGSSLROOTCERT`,
//! `PGCONNECT_TIMEOUT`) and its password file (`PGPASSFILE`, else
//! `~/.pgpass`), so no password need be on the command line.
//!
//! TLS follows `sslmode`: `disable`; `prefer` (the default) and `require`
//! encrypt without checking the certificate, as libpq does; `verify-ca`
//! and `verify-full` check it against `sslrootcert` (or the system's
//! roots) and the host name (rustls always checks the name, so
//! `verify-ca` is as strict as `verify-full` here).

use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::time::Duration;

use postgres::config::{Host, SslMode};
use postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

/// A parsed `postgres://` spec.
pub(crate) struct Target {
    pub config: Config,
    pub tls: MakeRustlsConnect,
    /// `?table=`: the table to read (`schema.name`, SQL quoting allowed).
    pub table: Option<String>,
    /// The spec without a password: what reports and messages show.
    pub display: String,
}

/// Reads `spec` (and the environment, and the password file).
pub(crate) fn parse(spec: &str) -> Result<Target, String> {
    parse_with(spec, &|k| std::env::var(k).ok())
}

fn parse_with(spec: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Target, String> {
    let url = url::Url::parse(spec).map_err(|e| format!("not a postgres:// URL: {e}"))?;
    let mut table = None;
    let mut host = decode(url.host_str().unwrap_or("")).map(|h| {
        // [::1] in a URL is ::1 to connect to.
        h.trim_start_matches('[').trim_end_matches(']').to_string()
    })?;
    let mut port = url.port();
    let mut user = decode(url.username())?;
    let mut password = url.password().map(decode).transpose()?;
    let mut dbname = decode(url.path().trim_start_matches('/'))?;
    let mut sslmode = None;
    let mut rootcert = None;
    let mut timeout = None;
    let mut app = None;
    for (k, v) in url.query_pairs() {
        let v = v.into_owned();
        match k.as_ref() {
            "table" => table = Some(v),
            "host" => host = v,
            "port" => port = Some(v.parse().map_err(|_| format!("port={v}: not a port"))?),
            "user" => user = v,
            "password" => password = Some(v),
            "dbname" => dbname = v,
            "sslmode" => sslmode = Some(v),
            "sslrootcert" => rootcert = Some(v),
            "connect_timeout" => timeout = Some(v),
            "application_name" => app = Some(v),
            other => {
                return Err(format!(
                    "unknown parameter `{other}` (recon takes table, host, port, user, password, dbname, sslmode, sslrootcert, connect_timeout, application_name)"
                ))
            }
        }
    }
    if host.is_empty() {
        host = env("PGHOST").unwrap_or_else(|| {
            // libpq's default: Debian's socket directory, else TCP.
            if Path::new("/var/run/postgresql").is_dir() {
                "/var/run/postgresql".into()
            } else {
                "localhost".into()
            }
        });
    }
    let port = match port {
        Some(p) => p,
        None => match env("PGPORT") {
            Some(p) => p.parse().map_err(|_| format!("PGPORT={p}: not a port"))?,
            None => 5432,
        },
    };
    if user.is_empty() {
        user = env("PGUSER")
            .or_else(|| env("USER"))
            .or_else(|| env("LOGNAME"))
            .ok_or("no user: name one (postgres://USER@HOST/DB) or set PGUSER")?;
    }
    if dbname.is_empty() {
        dbname = env("PGDATABASE").unwrap_or_else(|| user.clone());
    }
    if password.is_none() {
        password = env("PGPASSWORD").or_else(|| {
            let file = env("PGPASSFILE")
                .map(PathBuf::from)
                .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
            pgpass(&file, &host, port, &dbname, &user)
        });
    }
    let sslmode = sslmode
        .or_else(|| env("PGSSLMODE"))
        .unwrap_or_else(|| "prefer".into());
    let rootcert = rootcert.or_else(|| env("PGSSLROOTCERT"));
    let timeout = match timeout.or_else(|| env("PGCONNECT_TIMEOUT")) {
        Some(t) => t
            .parse::<u64>()
            .map_err(|_| format!("connect_timeout={t}: not a number of seconds"))?,
        // libpq waits forever; a migration sign-off would rather hear why.
        None => 30,
    };

    let mut config = Config::new();
    if host.starts_with('/') {
        config.host_path(&host);
    } else {
        config.host(&host);
    }
    config
        .port(port)
        .user(&user)
        .dbname(&dbname)
        .application_name(app.as_deref().unwrap_or("recon"))
        .connect_timeout(Duration::from_secs(timeout.max(1)));
    if let Some(p) = &password {
        config.password(p);
    }
    let (mode, verify) = match sslmode.as_str() {
        "disable" => (SslMode::Disable, false),
        "allow" | "prefer" => (SslMode::Prefer, false),
        "require" => (SslMode::Require, false),
        "verify-ca" | "verify-full" => (SslMode::Require, true),
        other => {
            return Err(format!(
            "sslmode={other}: expected disable, allow, prefer, require, verify-ca or verify-full"
        ))
        }
    };
    config.ssl_mode(mode);
    let tls = tls(verify, rootcert.as_deref())?;
    let mut display = url.clone();
    let _ = display.set_password(None);
    let display = display
        .as_str()
        .split('&')
        .filter(|p| !p.starts_with("password="))
        .collect::<Vec<_>>()
        .join("&");
    let display = display.replace("?password=", "?").replace("?&", "?");
    Ok(Target {
        config,
        tls,
        table,
        display: display.trim_end_matches('?').to_string(),
    })
}

/// The host a password file line is matched against: a socket directory
/// counts as `localhost`, as in libpq.
fn pgpass(file: &Path, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let host = if host.starts_with('/') {
        "localhost"
    } else {
        host
    };
    let port = port.to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        let [h, p, d, u, pw] = fields.as_slice() else {
            continue;
        };
        let ok = |pat: &str, v: &str| pat == "*" || pat == v;
        if ok(h, host) && ok(p, &port) && ok(d, db) && ok(u, user) {
            return Some(pw.clone());
        }
    }
    None
}

/// A `.pgpass` line's five fields: `:` separates, `\` escapes `:` and `\`.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' if out.len() < 4 => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
    out
}

/// `%xx` escapes in a URL part.
fn decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("a bad %-escape in {s:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{s:?} is not UTF-8 once unescaped"))
}

/// The TLS connector: verifying (against `rootcert`, else the system's
/// roots), or encrypting only.
fn tls(verify: bool, rootcert: Option<&str>) -> Result<MakeRustlsConnect, String> {
    use rustls::ClientConfig;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let config = if verify {
        let mut roots = rustls::RootCertStore::empty();
        match rootcert {
            Some(path) => {
                use rustls::pki_types::pem::PemObject;
                let certs = rustls::pki_types::CertificateDer::pem_file_iter(path)
                    .map_err(|e| format!("sslrootcert={path}: {e}"))?;
                for c in certs {
                    let c = c.map_err(|e| format!("sslrootcert={path}: {e}"))?;
                    roots
                        .add(c)
                        .map_err(|e| format!("sslrootcert={path}: {e}"))?;
                }
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider)))
            .with_no_client_auth()
    };
    Ok(MakeRustlsConnect::new(config))
}

/// `sslmode=prefer|require`: the connection is encrypted, the certificate
/// not checked (libpq's meaning). The handshake's signatures are still
/// verified, so the session is with the holder of the certificate sent.
#[derive(Debug)]
struct EncryptOnly(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The host a message names.
pub(crate) fn host_of(config: &Config) -> String {
    match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn urls_and_environment_fill_the_config() {
        let t = parse_with(
            "postgres://alice:s%40cret@db.example:6543/sales?table=public.orders&sslmode=disable",
            &env_of(&[]),
        )
        .unwrap();
        assert_eq!(t.config.get_user(), Some("alice"));
        assert_eq!(t.config.get_password(), Some(&b"s@cret"[..]));
        assert_eq!(t.config.get_dbname(), Some("sales"));
        assert_eq!(t.config.get_ports(), &[6543]);
        assert_eq!(t.table.as_deref(), Some("public.orders"));
        assert!(!t.display.contains("cret"), "{}", t.display);
        assert_eq!(
            t.display,
            "postgres://alice@db.example:6543/sales?table=public.orders&sslmode=disable"
        );

        let t = parse_with(
            "postgres:///?table=t",
            &env_of(&[
                ("PGHOST", "/tmp/sock"),
                ("PGPORT", "5499"),
                ("PGUSER", "bob"),
                ("PGPASSWORD", "pw"),
            ]),
        )
        .unwrap();
        assert_eq!(t.config.get_hosts(), &[Host::Unix("/tmp/sock".into())]);
        assert_eq!(t.config.get_ports(), &[5499]);
        assert_eq!(t.config.get_dbname(), Some("bob"));
        assert_eq!(t.config.get_password(), Some(&b"pw"[..]));

        assert!(parse_with("postgres://u@h/db?tabel=x", &env_of(&[]))
            .err()
            .unwrap()
            .contains("unknown parameter `tabel`"));
        assert!(parse_with("postgres://u@h/db?sslmode=maybe", &env_of(&[]))
            .err()
            .unwrap()
            .contains("sslmode=maybe"));
    }

    #[test]
    fn password_files_match_like_libpq() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(
            &f,
            "# comment\nother:5432:*:*:no\nlocalhost:5499:sales:carol:pa\\:ss\n*:*:*:*:any\n",
        )
        .unwrap();
        assert_eq!(
            pgpass(&f, "/tmp/sock", 5499, "sales", "carol").as_deref(),
            Some("pa:ss")
        );
        assert_eq!(pgpass(&f, "db", 1, "x", "y").as_deref(), Some("any"));
        let t = parse_with(
            "postgres://carol@localhost:5499/sales",
            &env_of(&[("PGPASSFILE", f.to_str().unwrap())]),
        )
        .unwrap();
        assert_eq!(t.config.get_password(), Some(&b"pa:ss"[..]));
    }
}
