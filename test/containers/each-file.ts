import { stopOrphanDns } from '../support/container-engine.js';

// Before each file of the container suite (its vitest.config.ts `setupFiles`): a dnsmasq that
// an earlier file's network left running would take the next network's bridge address
// (test/support/orphan-dns.ts), and every container of that file would fail to start.
await stopOrphanDns();
