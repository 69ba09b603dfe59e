import { writeFileSync } from 'node:fs';
import { COMMITTED_DOCUMENT, documentText } from './committed-document.js';

// `npm run openapi`: regenerates docs/openapi.json from the route declarations.
writeFileSync(COMMITTED_DOCUMENT, documentText());
process.stdout.write(`wrote ${COMMITTED_DOCUMENT}\n`);
