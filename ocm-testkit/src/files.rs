//! Files the testkit writes for its clients: kubeconfigs (which hold credentials) and saved
//! state (which holds every object, Secrets included). Both are readable and writable by
//! their owner only, as `kubectl` and kind write kubeconfigs.

use std::io::Write as _;
use std::path::Path;

/// Writes `contents` to `path`, creating it readable and writable by its owner only (mode
/// `0600` on Unix) and taking that mode away from a file that was there before.
pub fn write_private(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    let path = path.as_ref();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        options.mode(0o600);
        let mut file = options.open(path)?;
        // `mode` applies to new files only.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(contents.as_ref())?;
        file.sync_all()
    }
    #[cfg(not(unix))]
    {
        let mut file = options.open(path)?;
        file.write_all(contents.as_ref())?;
        file.sync_all()
    }
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    #[test]
    fn files_are_private_even_when_they_were_not() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("ocm-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kubeconfig");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        super::write_private(&path, "new").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
