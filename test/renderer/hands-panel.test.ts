import { beforeEach, describe, expect, it } from 'vitest';
import type { ProbeResult } from '../../main/api/ui/contract';
import { emptyDraft, patchDraft, useHandsPanel } from '../../renderer/src/state/hands-panel';

/** A test that found the host key known and the key logging in: the form's Attach is enabled by it. */
const passed = { host_key: { status: 'known', fingerprint: 'SHA256:abc' }, auth: { ok: true } } as unknown as ProbeResult;

describe('the attach form’s last connection test', () => {
  beforeEach(() => useHandsPanel.setState({ draft: { ...emptyDraft(), host: 'box', user: 'alice', credentialId: 'vcrd_one' }, probe: passed }));

  it('is kept when only the name changes', () => {
    patchDraft({ name: 'my box' });
    expect(useHandsPanel.getState().probe).toBe(passed);
  });

  it.each([['host', { host: 'other' }], ['port', { port: '2222' }], ['user', { user: 'root' }], ['key', { credentialId: 'vcrd_two' }]] as const)('is dropped when the %s changes (it tested another login)', (_, patch) => {
    patchDraft(patch);
    expect(useHandsPanel.getState().probe).toBeNull();
  });
});
