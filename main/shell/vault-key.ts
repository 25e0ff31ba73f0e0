import { safeStorage } from 'electron';
import type { VaultKeyWrapper } from '../vault/keys';

/**
 * The vault key file's content wrapped by the OS keychain through Electron's async safeStorage
 * API. Not offered on Linux's `basic_text` backend, where it would be obfuscation only: the
 * key file's 0600 mode is then the protection, as in `serve`.
 */
export function safeStorageKeyWrapper(): VaultKeyWrapper {
  const backend = () => (process.platform === 'linux' ? safeStorage.getSelectedStorageBackend() : process.platform === 'darwin' ? 'Keychain' : 'DPAPI');
  return {
    get name() {
      return `Electron safeStorage (${backend()})`;
    },
    async available() {
      if (!(await safeStorage.isAsyncEncryptionAvailable())) return false;
      return backend() !== 'basic_text';
    },
    wrap: (text) => safeStorage.encryptStringAsync(text),
    unwrap: async (wrapped) => (await safeStorage.decryptStringAsync(wrapped)).result,
  };
}
