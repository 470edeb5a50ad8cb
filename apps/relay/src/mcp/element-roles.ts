/*
 * The short role of an element, from its Android class (issue 40, item 2): the widget's kind as a model names it.
 * Matched on the class's short name (`android.widget.ImageButton` → `ImageButton`) by suffix, first rule first,
 * so AndroidX, Material and app subclasses (`MaterialButton`, `AppCompatCheckBox`, `SwitchCompat`) land where
 * their base does. An editable node is `input` whatever its class (element-tree.ts roleOf).
 */

export const ROLES = [
  'button',
  'input',
  'switch',
  'checkbox',
  'radio',
  'toggle',
  'image',
  'text',
  'list',
  'scroll',
  'pager',
  'tab',
  'web',
  'progress',
  'slider',
  'spinner',
  'group',
  'view',
] as const;
export type Role = (typeof ROLES)[number];

type Rule = [test: (short: string) => boolean, role: Role];
const ends =
  (...suffixes: string[]) =>
  (s: string): boolean =>
    suffixes.some((x) => s.endsWith(x));

/** In order: the first that matches decides (`ToggleButton` is a toggle before it is a button). */
export const ROLE_OF_CLASS: readonly Rule[] = [
  [ends('EditText', 'TextInputEditText', 'AutoCompleteTextView', 'SearchView'), 'input'],
  [ends('Switch', 'SwitchCompat', 'SwitchMaterial', 'MaterialSwitch'), 'switch'],
  [ends('CheckBox', 'CheckedTextView'), 'checkbox'],
  [ends('RadioButton'), 'radio'],
  [ends('ToggleButton', 'Chip'), 'toggle'],
  [ends('Button', 'FloatingActionButton'), 'button'],
  [ends('ImageView'), 'image'],
  [ends('TextView'), 'text'],
  [ends('RecyclerView', 'ListView', 'GridView', 'LazyColumn', 'LazyRow'), 'list'],
  [ends('ScrollView'), 'scroll'],
  [ends('ViewPager', 'ViewPager2'), 'pager'],
  [ends('TabLayout', 'TabView', 'Tab'), 'tab'],
  [ends('WebView'), 'web'],
  [ends('ProgressBar'), 'progress'],
  [ends('SeekBar', 'Slider', 'RatingBar'), 'slider'],
  [ends('Spinner'), 'spinner'],
  [ends('Layout', 'ViewGroup', 'Toolbar', 'CardView', 'BottomNavigationView', 'NavigationView'), 'group'],
];
