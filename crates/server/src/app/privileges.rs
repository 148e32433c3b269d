//! `-u USER` (memcached's `-u`): a server started as root binds its ports,
//! then takes USER's identity before it opens a store, so the store's files
//! (and everything written after: backups, rebuilds, the update log, the
//! pid file) belong to USER, and a flaw in the server cannot act as root.
//! Started by anyone else, the flag changes nothing, as in memcached.
//! Started as root without it, the server refuses to run, as memcached
//! does: `-u root` is the explicit way to stay root.

use std::ffi::CString;

/// memcached's words, and what to do instead.
pub const ROOT_WITHOUT_USER: &str = "can't run as root without the -u switch: \
     give -u USER to run as USER once the ports are bound (-u root to stay root)";

/// Refuses to run as root (real or effective uid 0, as memcached checks)
/// unless `-u` names a user.
pub fn check_root(user: Option<&str>) -> Result<(), String> {
    // SAFETY: getuid and geteuid have no preconditions.
    let root = unsafe { libc::getuid() == 0 || libc::geteuid() == 0 };
    match user {
        None | Some("") if root => Err(ROOT_WITHOUT_USER.into()),
        _ => Ok(()),
    }
}

/// Takes `user`'s uid, gid and supplementary groups if running as root;
/// true when it did. An unknown user, or a call the kernel refuses, is an
/// error: going on as root would be what the flag was given to prevent.
pub fn become_user(user: &str) -> Result<bool, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        tracing::info!("-u {user}: not running as root, so nothing to give up");
        return Ok(false);
    }
    let name = CString::new(user).map_err(|_| format!("-u {user:?}: not a user name"))?;
    let (uid, gid) = lookup(&name).ok_or_else(|| format!("-u {user}: no such user"))?;
    let fail = |what: &str| format!("-u {user}: {what}: {}", std::io::Error::last_os_error());
    // SAFETY: `name` is a valid C string; the ids come from the password
    // database. Groups first: after setuid there is no right to change them.
    unsafe {
        if libc::initgroups(name.as_ptr(), gid) != 0 {
            return Err(fail("initgroups"));
        }
        if libc::setgid(gid) != 0 {
            return Err(fail("setgid"));
        }
        if libc::setuid(uid) != 0 {
            return Err(fail("setuid"));
        }
    }
    tracing::info!("running as {user} (uid {uid}, gid {gid})");
    Ok(true)
}

/// The uid and gid of `name` in the password database.
fn lookup(name: &CString) -> Option<(libc::uid_t, libc::gid_t)> {
    // SAFETY: an all-zero passwd is a valid out-parameter.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call, `buf` for its length.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    (rc == 0 && !found.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
}
