import * as path from 'node:path';
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the rule is CommonJS so that eslint.config.mjs and Jest both load it
const { rules } = require('../../apps/console/eslint-boundaries.cjs') as { rules: Record<string, never> };

const src = (file: string) => path.join(__dirname, '../../apps/console/src', file);

/** bulletproof-react's boundaries in the console: features never import each other; shared code no feature. */
new RuleTester({ languageOptions: { parser: tseslint.parser } }).run('console/import-boundaries', rules['import-boundaries'], {
  valid: [
    { filename: src('features/bridge/components/bridge-page.tsx'), code: "import { useBridge } from '../api/get-bridge';" },
    { filename: src('features/bridge/components/bridge-page.tsx'), code: "import { Card } from '@/components/ui';" },
    { filename: src('features/bridge/index.ts'), code: "import { bridgeKey } from '@/features/bridge/api/get-bridge';" },
    { filename: src('features/bridge/index.ts'), code: "import type { BridgeView } from '@svc/console-api';" },
    { filename: src('app/features.ts'), code: "import { bridgeFeature } from '@/features/bridge';" },
    { filename: src('lib/format.ts'), code: "import { x } from './server-time';" },
  ],
  invalid: [
    {
      filename: src('features/bridge/components/bridge-page.tsx'),
      code: "import { useMedia } from '@/features/media/api/get-media';",
      errors: [{ messageId: 'crossFeature' }],
    },
    {
      filename: src('features/bridge/components/bridge-page.tsx'),
      code: "import { useMedia } from '../../media/api/get-media';",
      errors: [{ messageId: 'crossFeature' }],
    },
    { filename: src('features/bridge/index.ts'), code: "export { mediaFeature } from '../media';", errors: [{ messageId: 'crossFeature' }] },
    { filename: src('features/bridge/index.ts'), code: "const m = import('@/features/media');", errors: [{ messageId: 'crossFeature' }] },
    { filename: src('features/bridge/index.ts'), code: "import { FEATURES } from '@/app/features';", errors: [{ messageId: 'upward' }] },
    { filename: src('components/ui.tsx'), code: "import { useBridge } from '@/features/bridge/api/get-bridge';", errors: [{ messageId: 'upward' }] },
    { filename: src('lib/feature.ts'), code: "import { FEATURES } from '../app/features';", errors: [{ messageId: 'upward' }] },
  ],
});
