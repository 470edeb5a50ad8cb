// ESLint 10 flat config: typescript-eslint with type information for the TypeScript sources.
// Formatting is Prettier's job (`prettier --check`), so no stylistic rules here.
import { builtinModules } from 'node:module';
import reactHooks from 'eslint-plugin-react-hooks';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';
import consoleBoundaries from './apps/console/eslint-boundaries.cjs';

const nodeBuiltins = [...new Set(builtinModules.map((m) => m.replace(/^node:/, '')))];

// The pure modules of libs/events (no Node, no I/O, no import but each other): the only ones the console's
// browser build and libs/domain may take as values, by deep path. The rest of libs/events (the stores, the
// sealing with node:crypto) is types only there. The modules themselves are held to it below.
const pureEventsModules = ['event-types-match', 'event-log-filter', 'plural', 'grant-channels', 'personal-fields'];
const pureEventsList = pureEventsModules.join(', ');
const pureEventsAlternatives = pureEventsModules.join('|');

// The console's wire shapes are types only: a value import would put relay code in the browser bundle.
const consoleApiTypesOnly = {
  name: '@svc/console-api',
  allowTypeImports: true,
  message: '@svc/console-api holds types only: `import type`.',
};

// Comments move with their code (STYLE.md): a split that moves a declaration leaves its doc comment behind,
// stacked on the next one's. Two doc comments with nothing between them mean one is on the wrong declaration.
const house = {
  rules: {
    'stacked-doc-comments': {
      meta: {
        type: 'problem',
        docs: { description: 'A doc comment directly above another: one of them documents a declaration that moved.' },
        schema: [],
        messages: { stacked: 'A doc comment directly above another: move it to the declaration it documents, or merge the two.' },
      },
      create(context) {
        return {
          Program() {
            const docs = context.sourceCode.getAllComments().filter((c) => c.type === 'Block' && c.value.startsWith('*'));
            for (let i = 1; i < docs.length; i++)
              if (docs[i].loc.start.line === docs[i - 1].loc.end.line + 1) context.report({ loc: docs[i].loc, messageId: 'stacked' });
          },
        };
      },
    },
  },
};

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test-results/**', 'apps/console/dist/**', '**/*.d.ts', 'reports/**', '.stryker-tmp/**'],
  },
  {
    // The console (apps/console/src, *.tsx) is typed by its own tsconfig; projectService finds it.
    files: ['**/*.ts', '**/*.tsx', 'apps/console/vite.config.mts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { house },
    rules: {
      'house/stacked-doc-comments': 'error',
      // A promise nobody awaits loses its error: the relay must never drop an event write silently.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      // A switch over an event union must name every case or say `default:` on purpose (projections
      // handle a subset of events; the `default` is their explicit "ignore the rest").
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, allowDefaultCaseForExhaustiveSwitch: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests read loosely typed JSON bodies; `any` there is a convenience, not a design.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // class-validator's index loads 320 modules at start; the relay reaches it decorator by decorator.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['apps/relay/src/common/http/validators.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'class-validator',
              allowTypeImports: true,
              message: 'Import validators from apps/relay/src/common/http/validators (the index costs 70 ms of start-up).',
            },
            consoleApiTypesOnly,
          ],
        },
      ],
    },
  },
  {
    // The console, bulletproof-react's way: hooks by the rules, features never import each other, shared
    // code (components, lib) imports no feature (apps/console/eslint-boundaries.cjs).
    files: ['apps/console/src/**/*.ts', 'apps/console/src/**/*.tsx'],
    extends: [reactHooks.configs.flat.recommended],
    plugins: { console: consoleBoundaries },
    rules: {
      'react-hooks/exhaustive-deps': 'error',
      'console/import-boundaries': 'error',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [consoleApiTypesOnly],
          // libs/events' index holds the Node-side stores: the browser takes only its pure modules, by path.
          patterns: [
            {
              regex: `^@svc/events(?!/(?:${pureEventsAlternatives})$)`,
              allowTypeImports: true,
              message: `the console imports only the pure modules of libs/events (${pureEventsList}).`,
            },
          ],
        },
      ],
    },
  },
  {
    // Peers send text the relay runs patterns over: a pattern that backtracks super-linearly lets one
    // request freeze the event loop (a 150,000-character body held /health for 30 s). Neither rule may
    // be switched off without a reason saying the input is operator-controlled or bounded short.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
    },
  },
  {
    // libs/domain is pure: no framework, no rxjs, no Node I/O; events are imported as types only.
    files: ['libs/domain/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@svc/events', allowTypeImports: true, message: 'libs/domain may import @svc/events only with `import type`.' },
            { name: 'rxjs', message: 'libs/domain is pure: no rxjs (subscribe in apps/relay).' },
            ...nodeBuiltins.map((name) => ({ name, message: 'libs/domain is pure: no Node built-ins (pass values in from apps/relay).' })),
          ],
          patterns: [
            {
              regex: `^@svc/events/(?!(?:${pureEventsAlternatives})$)`,
              allowTypeImports: true,
              message: `libs/domain may import only the pure modules of @svc/events as values (${pureEventsList}); the rest with \`import type\`.`,
            },
            { group: ['@nestjs/*'], message: 'libs/domain is pure: no Nest.' },
            { group: ['rxjs/*'], message: 'libs/domain is pure: no rxjs.' },
            { group: ['node:*'], message: 'libs/domain is pure: no Node built-ins (pass values in from apps/relay).' },
          ],
        },
      ],
    },
  },
  {
    // A file does one job (STYLE.md): past 400 lines it is usually a registry, a protocol and a policy in one
    // file, to be split along the seams that already work. Every line counts, comments and blank ones too.
    files: ['apps/**/*.{ts,tsx,mts,js,cjs,mjs}', 'libs/**/*.{ts,tsx,mts,js,cjs,mjs}'],
    ignores: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.browser-spec.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  {
    // What makes a libs/events module pure enough for the browser and libs/domain: it imports nothing else.
    files: pureEventsModules.map((m) => `libs/events/src/${m}.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?!\\./(?:${pureEventsAlternatives})$)`,
              allowTypeImports: true,
              message: `a pure module of libs/events imports only the others (${pureEventsList}): the console and libs/domain load it as it is.`,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    extends: [tseslint.configs.recommended, tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs' },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module' },
  },
  {
    files: ['bin/svc'],
    extends: [tseslint.configs.recommended, tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
