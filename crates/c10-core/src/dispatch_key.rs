//! Dispatch keys and dispatch key sets (c10 `DispatchKey.h` / `DispatchKeySet.h`).
//!
//! Every tensor carries a [`DispatchKeySet`]: a 64-bit set whose low 16 bits name
//! *backends* ([`BackendComponent`]) and whose higher bits name *functionalities*
//! (autograd, autocast, conjugation, ...). A "runtime" key such as
//! [`DispatchKey::CPU`] or [`DispatchKey::AutogradCUDA`] is the combination of a
//! per-backend functionality bit (`Dense`, `AutogradFunctionality`, ...) and a
//! backend bit. This module reproduces PyTorch 2.15's numbering, bit layout,
//! printing and set algebra exactly; it implements key-set computation only (no
//! dispatcher tables).
//!
//! ```
//! use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
//!
//! // The key set of a fresh (non-inference) CPU tensor.
//! let ks = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(DispatchKey::CPU), false);
//! assert_eq!(ks.raw(), 0x94_0001_0001);
//! assert_eq!(
//!     ks.to_string(),
//!     "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
//! );
//! assert_eq!(ks.highest_priority_type_id(), DispatchKey::AutocastCPU);
//! ```

use std::fmt;
use std::iter::FusedIterator;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Sub, SubAssign};
use std::str::FromStr;

/// Errors produced when converting raw values or names into dispatch keys.
///
/// ```
/// use c10_core::dispatch_key::{DispatchKey, DispatchKeyError};
/// let err = DispatchKey::from_name("NotAKey").unwrap_err();
/// assert_eq!(err, DispatchKeyError::UnknownKeyName("NotAKey".into()));
/// assert_eq!(err.to_string(), "could not parse dispatch key: NotAKey");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DispatchKeyError {
    /// A `u16` that is not a valid `DispatchKey` discriminant (valid: `0..=155`).
    #[error("invalid DispatchKey value {0} (expected 0..=155)")]
    InvalidKeyValue(u16),
    /// A `u8` that is not a valid `BackendComponent` discriminant (valid: `0..=16`).
    #[error("invalid BackendComponent value {0} (expected 0..=16)")]
    InvalidBackendValue(u8),
    /// A name that is not the printed name of any dispatch key (same text as
    /// c10's `parseDispatchKey`).
    #[error("could not parse dispatch key: {0}")]
    UnknownKeyName(String),
}

// ---------------------------------------------------------------------------
// BackendComponent
// ---------------------------------------------------------------------------

/// Defines [`BackendComponent`], `ALL_BACKEND_COMPONENTS` (indexed by
/// discriminant) and its `name` (c10's `toString`) from one table, so that
/// a component is added in one line.
macro_rules! backend_component_table {
    ($(#[$enum_attr:meta])* ; $( $(#[$attr:meta])* $variant:ident = $value:literal => $name:literal, )*) => {
        $(#[$enum_attr])*
        pub enum BackendComponent {
            $( $(#[$attr])* $variant = $value, )*
        }

        /// Number of `BackendComponent` values, `InvalidBit` included.
        const BACKEND_COMPONENT_COUNT: usize = [$( stringify!($variant), )*].len();

        // Every component, indexed by discriminant (`InvalidBit` first).
        const ALL_BACKEND_COMPONENTS: [BackendComponent; BACKEND_COMPONENT_COUNT] =
            [ $( BackendComponent::$variant, )* ];

        impl BackendComponent {
            /// The name c10's `toString(BackendComponent)` prints.
            ///
            /// Note the upstream quirk reproduced here: `MTIABit` and
            /// `MAIABit` print as `"MTIA"` and `"MAIA"` (without the `Bit`
            /// suffix).
            ///
            /// ```
            /// use c10_core::dispatch_key::BackendComponent;
            /// assert_eq!(BackendComponent::CUDABit.name(), "CUDABit");
            /// assert_eq!(BackendComponent::MTIABit.name(), "MTIA"); // the upstream quirk
            /// ```
            pub const fn name(self) -> &'static str {
                match self {
                    $( BackendComponent::$variant => $name, )*
                }
            }
        }
    };
}

// Variant names mirror the C++ enumerators so that code and printed output
// can be compared against PyTorch directly.
backend_component_table! {
    /// A backend bit of a [`DispatchKeySet`] (c10 `BackendComponent`, a `uint8_t`).
    ///
    /// Component `b` (for `b >= 1`) occupies bit `b - 1` of the set. `MetaBit` is
    /// deliberately last so that meta wins over every real backend when
    /// [`DispatchKeySet::highest_backend_key`] picks one.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKeySet};
    ///
    /// assert_eq!(BackendComponent::CUDABit as u8, 2);
    /// assert_eq!(DispatchKeySet::from_backend(BackendComponent::MetaBit).raw(), 0x8000);
    /// assert_eq!(BackendComponent::CPUBit.to_string(), "CPUBit");
    /// ```
    #[allow(clippy::upper_case_acronyms)]
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
    #[repr(u8)]
    ;
    /// No backend (also what a key without a backend bit maps to).
    #[default]
    InvalidBit = 0 => "InvalidBit",
    /// CPU.
    CPUBit = 1 => "CPUBit",
    /// CUDA.
    CUDABit = 2 => "CUDABit",
    /// AMD HIP (ROCm).
    HIPBit = 3 => "HIPBit",
    /// XLA (TPU and friends).
    XLABit = 4 => "XLABit",
    /// Apple Metal Performance Shaders.
    MPSBit = 5 => "MPSBit",
    /// Graphcore IPU.
    IPUBit = 6 => "IPUBit",
    /// Intel XPU.
    XPUBit = 7 => "XPUBit",
    /// Habana HPU.
    HPUBit = 8 => "HPUBit",
    /// NEC SX-Aurora Vector Engine.
    VEBit = 9 => "VEBit",
    /// Lazy tensors.
    LazyBit = 10 => "LazyBit",
    /// Meta training and inference accelerator.
    MTIABit = 11 => "MTIA",
    /// Microsoft MAIA.
    MAIABit = 12 => "MAIA",
    /// First out-of-tree backend slot.
    PrivateUse1Bit = 13 => "PrivateUse1Bit",
    /// Second out-of-tree backend slot.
    PrivateUse2Bit = 14 => "PrivateUse2Bit",
    /// Third out-of-tree backend slot.
    PrivateUse3Bit = 15 => "PrivateUse3Bit",
    /// Meta tensors (shape-only); the highest-priority backend.
    MetaBit = 16 => "MetaBit",
}

/// Number of real backend bits (`BackendComponent::EndOfBackendKeys`).
pub const NUM_BACKENDS: u8 = 16;

/// Mask of the backend bits of a [`DispatchKeySet`] (`0xFFFF`).
pub const FULL_BACKEND_MASK: u64 = (1u64 << NUM_BACKENDS) - 1;

/// c10's `num_functionality_keys`: the value of
/// [`DispatchKey::EndOfFunctionalityKeys`] (47).
pub const NUM_FUNCTIONALITY_KEYS: u8 = DispatchKey::EndOfFunctionalityKeys as u8;

/// Number of runtime per-backend functionality keys (`Dense`, `Quantized`,
/// `Sparse`, `SparseCsr`, `NestedTensor`, `AutogradFunctionality`).
pub const NUM_PER_BACKEND_FUNCTIONALITY_KEYS: u8 = 6;

/// Size of a dispatcher operator table in c10 (`num_runtime_entries`, 137).
pub const NUM_RUNTIME_ENTRIES: usize = NUM_FUNCTIONALITY_KEYS as usize
    + NUM_PER_BACKEND_FUNCTIONALITY_KEYS as usize * (NUM_BACKENDS as usize - 1);

// The bit layout needs every backend and functionality bit to fit in a u64
// (c10 static-asserts the same thing).
const _: () = assert!(NUM_BACKENDS as u32 + NUM_FUNCTIONALITY_KEYS as u32 <= 64);
const _: () = assert!(NUM_RUNTIME_ENTRIES == 137);

impl BackendComponent {
    /// The last real backend (c10 `EndOfBackendKeys`).
    pub const END_OF_BACKEND_KEYS: BackendComponent = BackendComponent::MetaBit;

    /// Every component in numeric order, `InvalidBit` first.
    pub const ALL: [BackendComponent; BACKEND_COMPONENT_COUNT] = ALL_BACKEND_COMPONENTS;

    /// Converts a raw `u8` discriminant; `None` when it is above 16.
    ///
    /// ```
    /// use c10_core::dispatch_key::BackendComponent;
    /// assert_eq!(BackendComponent::from_u8(16), Some(BackendComponent::MetaBit));
    /// assert_eq!(BackendComponent::from_u8(17), None);
    /// ```
    pub const fn from_u8(v: u8) -> Option<BackendComponent> {
        if (v as usize) < ALL_BACKEND_COMPONENTS.len() {
            Some(ALL_BACKEND_COMPONENTS[v as usize])
        } else {
            None
        }
    }
}

impl fmt::Display for BackendComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<u8> for BackendComponent {
    type Error = DispatchKeyError;

    fn try_from(v: u8) -> Result<Self, Self::Error> {
        BackendComponent::from_u8(v).ok_or(DispatchKeyError::InvalidBackendValue(v))
    }
}

impl From<BackendComponent> for u8 {
    fn from(b: BackendComponent) -> u8 {
        b as u8
    }
}

/// Maps a c10 `DeviceType` number to its backend bit (c10
/// `toBackendComponent(DeviceType)`).
///
/// Takes the device type as its raw `int8` value so this crate module does
/// not depend on the device type definition: CPU=0, CUDA=1, HIP=6, MAIA=8,
/// XLA=9, XPU=12, MPS=13, Meta=14, HPU=15, VE=16, Lazy=17, IPU=18, MTIA=19,
/// PrivateUse1=20. Every other device type (MKLDNN, OpenGL, OpenCL, IDEEP,
/// FPGA, Vulkan, Metal, unknown values) maps to
/// [`BackendComponent::InvalidBit`].
///
/// ```
/// use c10_core::dispatch_key::{backend_component_for_device_type, BackendComponent};
/// assert_eq!(backend_component_for_device_type(1), BackendComponent::CUDABit);
/// assert_eq!(backend_component_for_device_type(7), BackendComponent::InvalidBit); // FPGA
/// ```
pub const fn backend_component_for_device_type(device_type_index: i8) -> BackendComponent {
    match device_type_index {
        0 => BackendComponent::CPUBit,
        1 => BackendComponent::CUDABit,
        6 => BackendComponent::HIPBit,
        8 => BackendComponent::MAIABit,
        9 => BackendComponent::XLABit,
        12 => BackendComponent::XPUBit,
        13 => BackendComponent::MPSBit,
        14 => BackendComponent::MetaBit,
        15 => BackendComponent::HPUBit,
        16 => BackendComponent::VEBit,
        17 => BackendComponent::LazyBit,
        18 => BackendComponent::IPUBit,
        19 => BackendComponent::MTIABit,
        20 => BackendComponent::PrivateUse1Bit,
        _ => BackendComponent::InvalidBit,
    }
}

// ---------------------------------------------------------------------------
// DispatchKey
// ---------------------------------------------------------------------------

/// Defines [`DispatchKey`], `ALL_DISPATCH_KEYS` (indexed by discriminant)
/// and `DISPATCH_KEY_NAMES` (c10's `toString`) from one table, so that a key
/// is added in one line.
macro_rules! dispatch_key_table {
    ($(#[$enum_attr:meta])* ; $( $(#[$attr:meta])* $variant:ident = $value:literal => $name:literal, )*) => {
        $(#[$enum_attr])*
        pub enum DispatchKey {
            $( $(#[$attr])* $variant = $value, )*
        }

        /// Number of `DispatchKey` values (c10's keys up to
        /// `CompositeExplicitAutogradNonFunctional`).
        const DISPATCH_KEY_COUNT: usize = [$( stringify!($variant), )*].len();

        // Indexed by discriminant; a unit test checks `ALL_DISPATCH_KEYS[i] as u16 == i`.
        const ALL_DISPATCH_KEYS: [DispatchKey; DISPATCH_KEY_COUNT] = [ $( DispatchKey::$variant, )* ];
        // c10 `toString(DispatchKey)` for every discriminant, indexed by value. The
        // sentinel entries follow c10's fallback logic: `StartOf<F>Backends` is the
        // `<prefix>Undefined` runtime key and `EndOfFunctionalityKeys` falls through
        // to `"UnknownUnknown"`.
        const DISPATCH_KEY_NAMES: [&str; DISPATCH_KEY_COUNT] = [ $( $name, )* ];
    };
}

// Variant names mirror the C++ enumerators (CPU, CUDA, TESTING_ONLY_...).
dispatch_key_table! {
    /// A dispatch key (c10 `DispatchKey`, a `uint16_t`), numbered exactly as in
    /// PyTorch 2.15.
    ///
    /// * `0..=47` are *functionality* keys; the value is the priority (higher is
    ///   dispatched first) and key `k >= 1` owns bit `15 + k` of a
    ///   [`DispatchKeySet`].
    /// * `48..=149` are *runtime per-backend* keys in six blocks of 17
    ///   (`StartOf<F>Backends`, then one key per [`BackendComponent`] from CPU to
    ///   Meta) for the functionalities `Dense`, `Quantized`, `Sparse`,
    ///   `SparseCsr`, `NestedTensor` and `AutogradFunctionality`.
    /// * `150..=155` are *alias* keys that never appear in a key set.
    ///
    /// [`name`](DispatchKey::name) (and `Display`) print what c10's `toString`
    /// prints; `Debug` prints the enumerator identifier.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey};
    ///
    /// assert_eq!(DispatchKey::CPU as u16, 49);
    /// assert_eq!(DispatchKey::AutogradMeta as u16, 149);
    /// assert_eq!(DispatchKey::AutogradCUDA.to_functionality_key(), DispatchKey::AutogradFunctionality);
    /// assert_eq!(DispatchKey::AutogradCUDA.to_backend_component(), BackendComponent::CUDABit);
    /// assert_eq!(DispatchKey::SparseCsrXPU.to_string(), "SparseCsrXPU");
    /// ```
    #[allow(clippy::upper_case_acronyms, non_camel_case_types)]
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
    #[repr(u16)]
    ;
    /// No dispatch key (C++ also spells it `CatchAll`); never occupies a bit.
    #[default]
    Undefined = 0 => "Undefined",
    /// Per-backend functionality bit for dense strided tensors; its runtime instances are `CPU`, `CUDA`, ... `Meta`.
    Dense = 1 => "Dense",
    /// FPGA backend (no backend bit of its own; uses `AutogradOther`).
    FPGA = 2 => "FPGA",
    /// Vulkan backend (no backend bit of its own; uses `AutogradOther`).
    Vulkan = 3 => "Vulkan",
    /// Metal backend (no backend bit of its own; uses `AutogradOther`).
    Metal = 4 => "Metal",
    /// Per-backend functionality bit for quantized tensors (`QuantizedCPU`, ...).
    Quantized = 5 => "Quantized",
    /// Tensors created with a custom RNG generator.
    CustomRNGKeyId = 6 => "CustomRNGKeyId",
    /// Opaque MKL-DNN (oneDNN) tensors.
    MkldnnCPU = 7 => "MkldnnCPU",
    /// Per-backend functionality bit for sparse COO tensors (`SparseCPU`, ...).
    Sparse = 8 => "Sparse",
    /// Per-backend functionality bit for compressed sparse tensors (`SparseCsrCPU`, ...).
    SparseCsr = 9 => "SparseCsr",
    /// Per-backend functionality bit for nested (jagged) tensors (`NestedTensorCPU`, ...).
    NestedTensor = 10 => "NestedTensor",
    /// Picks a backend for factory functions that take no tensor arguments.
    BackendSelect = 11 => "BackendSelect",
    /// Fake tensors (shape propagation without data).
    Fake = 12 => "Fake",
    /// Python tensor subclasses with `__torch_dispatch__`.
    Python = 13 => "Python",
    /// functorch dynamic-layer stack, back half.
    FuncTorchDynamicLayerBackMode = 14 => "FuncTorchDynamicLayerBackMode",
    /// Functionalization pass (removes mutation and aliasing).
    Functionalize = 15 => "Functionalize",
    /// Lazily conjugated tensors (`conj()` sets this key).
    Conjugate = 16 => "Conjugate",
    /// Lazily negated tensors (e.g. `.imag` of a conjugate view).
    Negative = 17 => "Negative",
    /// Efficient all-zero tensors (used for undefined gradients).
    ZeroTensor = 18 => "ZeroTensor",
    /// Version-counter bumps and view tracking for in-place and view ops.
    ADInplaceOrView = 19 => "ADInplaceOrView",
    /// Autograd for backends without a dedicated autograd key (e.g. HIP, VE, FPGA).
    AutogradOther = 20 => "AutogradOther",
    /// Per-backend functionality bit for autograd (`AutogradCPU`, ...).
    AutogradFunctionality = 21 => "AutogradFunctionality",
    /// Autograd for nested tensors.
    AutogradNestedTensor = 22 => "AutogradNestedTensor",
    /// TorchScript tracer.
    Tracer = 23 => "Tracer",
    /// Automatic mixed precision on CPU.
    AutocastCPU = 24 => "AutocastCPU",
    /// Automatic mixed precision on MTIA.
    AutocastMTIA = 25 => "AutocastMTIA",
    /// Automatic mixed precision on MAIA.
    AutocastMAIA = 26 => "AutocastMAIA",
    /// Automatic mixed precision on XPU.
    AutocastXPU = 27 => "AutocastXPU",
    /// Automatic mixed precision on IPU.
    AutocastIPU = 28 => "AutocastIPU",
    /// Automatic mixed precision on HPU.
    AutocastHPU = 29 => "AutocastHPU",
    /// Automatic mixed precision on XLA.
    AutocastXLA = 30 => "AutocastXLA",
    /// Automatic mixed precision on MPS.
    AutocastMPS = 31 => "AutocastMPS",
    /// Automatic mixed precision on CUDA (C++ alias `Autocast`).
    AutocastCUDA = 32 => "AutocastCUDA",
    /// Automatic mixed precision on the PrivateUse1 backend.
    AutocastPrivateUse1 = 33 => "AutocastPrivateUse1",
    /// functorch `vmap` batched tensors.
    FuncTorchBatched = 34 => "FuncTorchBatched",
    /// functorch `vmap` over nested tensors.
    BatchedNestedTensor = 35 => "BatchedNestedTensor",
    /// functorch `vmap` mode (randomness handling).
    FuncTorchVmapMode = 36 => "FuncTorchVmapMode",
    /// Legacy (in-core) `vmap` batched tensors.
    Batched = 37 => "Batched",
    /// Legacy (in-core) `vmap` mode.
    VmapMode = 38 => "VmapMode",
    /// functorch `grad` wrapper tensors.
    FuncTorchGradWrapper = 39 => "FuncTorchGradWrapper",
    /// Deferred module initialisation (torchdistx).
    DeferredInit = 40 => "DeferredInit",
    /// Snapshots Python thread-local dispatch state.
    PythonTLSSnapshot = 41 => "PythonTLSSnapshot",
    /// functorch dynamic-layer stack, front half.
    FuncTorchDynamicLayerFrontMode = 42 => "FuncTorchDynamicLayerFrontMode",
    /// Reserved for dispatcher tests (wrapper tensors).
    TESTING_ONLY_GenericWrapper = 43 => "TESTING_ONLY_GenericWrapper",
    /// Reserved for dispatcher tests (modes).
    TESTING_ONLY_GenericMode = 44 => "TESTING_ONLY_GenericMode",
    /// Pre-dispatch tracing (`torch.export`).
    PreDispatch = 45 => "PreDispatch",
    /// Python-level dispatcher override; the highest-priority key.
    PythonDispatcher = 46 => "PythonDispatcher",
    /// Sentinel: one past the last functionality key (not a real key).
    EndOfFunctionalityKeys = 47 => "UnknownUnknown",
    /// Sentinel: start of the Dense runtime block (`Dense` with `InvalidBit`; prints as `Undefined`).
    StartOfDenseBackends = 48 => "Undefined",
    /// Runtime key: `Dense` functionality on the `CPU` backend.
    CPU = 49 => "CPU",
    /// Runtime key: `Dense` functionality on the `CUDA` backend.
    CUDA = 50 => "CUDA",
    /// Runtime key: `Dense` functionality on the `HIP` backend.
    HIP = 51 => "HIP",
    /// Runtime key: `Dense` functionality on the `XLA` backend.
    XLA = 52 => "XLA",
    /// Runtime key: `Dense` functionality on the `MPS` backend.
    MPS = 53 => "MPS",
    /// Runtime key: `Dense` functionality on the `IPU` backend.
    IPU = 54 => "IPU",
    /// Runtime key: `Dense` functionality on the `XPU` backend.
    XPU = 55 => "XPU",
    /// Runtime key: `Dense` functionality on the `HPU` backend.
    HPU = 56 => "HPU",
    /// Runtime key: `Dense` functionality on the `VE` backend.
    VE = 57 => "VE",
    /// Runtime key: `Dense` functionality on the `Lazy` backend.
    Lazy = 58 => "Lazy",
    /// Runtime key: `Dense` functionality on the `MTIA` backend.
    MTIA = 59 => "MTIA",
    /// Runtime key: `Dense` functionality on the `MAIA` backend.
    MAIA = 60 => "MAIA",
    /// Runtime key: `Dense` functionality on the `PrivateUse1` backend.
    PrivateUse1 = 61 => "PrivateUse1",
    /// Runtime key: `Dense` functionality on the `PrivateUse2` backend.
    PrivateUse2 = 62 => "PrivateUse2",
    /// Runtime key: `Dense` functionality on the `PrivateUse3` backend.
    PrivateUse3 = 63 => "PrivateUse3",
    /// Runtime key: `Dense` functionality on the `Meta` backend.
    Meta = 64 => "Meta",
    /// Sentinel: start of the Quantized runtime block (`Quantized` with `InvalidBit`; prints as `QuantizedUndefined`).
    StartOfQuantizedBackends = 65 => "QuantizedUndefined",
    /// Runtime key: `Quantized` functionality on the `CPU` backend.
    QuantizedCPU = 66 => "QuantizedCPU",
    /// Runtime key: `Quantized` functionality on the `CUDA` backend.
    QuantizedCUDA = 67 => "QuantizedCUDA",
    /// Runtime key: `Quantized` functionality on the `HIP` backend.
    QuantizedHIP = 68 => "QuantizedHIP",
    /// Runtime key: `Quantized` functionality on the `XLA` backend.
    QuantizedXLA = 69 => "QuantizedXLA",
    /// Runtime key: `Quantized` functionality on the `MPS` backend.
    QuantizedMPS = 70 => "QuantizedMPS",
    /// Runtime key: `Quantized` functionality on the `IPU` backend.
    QuantizedIPU = 71 => "QuantizedIPU",
    /// Runtime key: `Quantized` functionality on the `XPU` backend.
    QuantizedXPU = 72 => "QuantizedXPU",
    /// Runtime key: `Quantized` functionality on the `HPU` backend.
    QuantizedHPU = 73 => "QuantizedHPU",
    /// Runtime key: `Quantized` functionality on the `VE` backend.
    QuantizedVE = 74 => "QuantizedVE",
    /// Runtime key: `Quantized` functionality on the `Lazy` backend.
    QuantizedLazy = 75 => "QuantizedLazy",
    /// Runtime key: `Quantized` functionality on the `MTIA` backend.
    QuantizedMTIA = 76 => "QuantizedMTIA",
    /// Runtime key: `Quantized` functionality on the `MAIA` backend.
    QuantizedMAIA = 77 => "QuantizedMAIA",
    /// Runtime key: `Quantized` functionality on the `PrivateUse1` backend.
    QuantizedPrivateUse1 = 78 => "QuantizedPrivateUse1",
    /// Runtime key: `Quantized` functionality on the `PrivateUse2` backend.
    QuantizedPrivateUse2 = 79 => "QuantizedPrivateUse2",
    /// Runtime key: `Quantized` functionality on the `PrivateUse3` backend.
    QuantizedPrivateUse3 = 80 => "QuantizedPrivateUse3",
    /// Runtime key: `Quantized` functionality on the `Meta` backend.
    QuantizedMeta = 81 => "QuantizedMeta",
    /// Sentinel: start of the Sparse runtime block (`Sparse` with `InvalidBit`; prints as `SparseUndefined`).
    StartOfSparseBackends = 82 => "SparseUndefined",
    /// Runtime key: `Sparse` functionality on the `CPU` backend.
    SparseCPU = 83 => "SparseCPU",
    /// Runtime key: `Sparse` functionality on the `CUDA` backend.
    SparseCUDA = 84 => "SparseCUDA",
    /// Runtime key: `Sparse` functionality on the `HIP` backend.
    SparseHIP = 85 => "SparseHIP",
    /// Runtime key: `Sparse` functionality on the `XLA` backend.
    SparseXLA = 86 => "SparseXLA",
    /// Runtime key: `Sparse` functionality on the `MPS` backend.
    SparseMPS = 87 => "SparseMPS",
    /// Runtime key: `Sparse` functionality on the `IPU` backend.
    SparseIPU = 88 => "SparseIPU",
    /// Runtime key: `Sparse` functionality on the `XPU` backend.
    SparseXPU = 89 => "SparseXPU",
    /// Runtime key: `Sparse` functionality on the `HPU` backend.
    SparseHPU = 90 => "SparseHPU",
    /// Runtime key: `Sparse` functionality on the `VE` backend.
    SparseVE = 91 => "SparseVE",
    /// Runtime key: `Sparse` functionality on the `Lazy` backend.
    SparseLazy = 92 => "SparseLazy",
    /// Runtime key: `Sparse` functionality on the `MTIA` backend.
    SparseMTIA = 93 => "SparseMTIA",
    /// Runtime key: `Sparse` functionality on the `MAIA` backend.
    SparseMAIA = 94 => "SparseMAIA",
    /// Runtime key: `Sparse` functionality on the `PrivateUse1` backend.
    SparsePrivateUse1 = 95 => "SparsePrivateUse1",
    /// Runtime key: `Sparse` functionality on the `PrivateUse2` backend.
    SparsePrivateUse2 = 96 => "SparsePrivateUse2",
    /// Runtime key: `Sparse` functionality on the `PrivateUse3` backend.
    SparsePrivateUse3 = 97 => "SparsePrivateUse3",
    /// Runtime key: `Sparse` functionality on the `Meta` backend.
    SparseMeta = 98 => "SparseMeta",
    /// Sentinel: start of the SparseCsr runtime block (`SparseCsr` with `InvalidBit`; prints as `SparseCsrUndefined`).
    StartOfSparseCsrBackends = 99 => "SparseCsrUndefined",
    /// Runtime key: `SparseCsr` functionality on the `CPU` backend.
    SparseCsrCPU = 100 => "SparseCsrCPU",
    /// Runtime key: `SparseCsr` functionality on the `CUDA` backend.
    SparseCsrCUDA = 101 => "SparseCsrCUDA",
    /// Runtime key: `SparseCsr` functionality on the `HIP` backend.
    SparseCsrHIP = 102 => "SparseCsrHIP",
    /// Runtime key: `SparseCsr` functionality on the `XLA` backend.
    SparseCsrXLA = 103 => "SparseCsrXLA",
    /// Runtime key: `SparseCsr` functionality on the `MPS` backend.
    SparseCsrMPS = 104 => "SparseCsrMPS",
    /// Runtime key: `SparseCsr` functionality on the `IPU` backend.
    SparseCsrIPU = 105 => "SparseCsrIPU",
    /// Runtime key: `SparseCsr` functionality on the `XPU` backend.
    SparseCsrXPU = 106 => "SparseCsrXPU",
    /// Runtime key: `SparseCsr` functionality on the `HPU` backend.
    SparseCsrHPU = 107 => "SparseCsrHPU",
    /// Runtime key: `SparseCsr` functionality on the `VE` backend.
    SparseCsrVE = 108 => "SparseCsrVE",
    /// Runtime key: `SparseCsr` functionality on the `Lazy` backend.
    SparseCsrLazy = 109 => "SparseCsrLazy",
    /// Runtime key: `SparseCsr` functionality on the `MTIA` backend.
    SparseCsrMTIA = 110 => "SparseCsrMTIA",
    /// Runtime key: `SparseCsr` functionality on the `MAIA` backend.
    SparseCsrMAIA = 111 => "SparseCsrMAIA",
    /// Runtime key: `SparseCsr` functionality on the `PrivateUse1` backend.
    SparseCsrPrivateUse1 = 112 => "SparseCsrPrivateUse1",
    /// Runtime key: `SparseCsr` functionality on the `PrivateUse2` backend.
    SparseCsrPrivateUse2 = 113 => "SparseCsrPrivateUse2",
    /// Runtime key: `SparseCsr` functionality on the `PrivateUse3` backend.
    SparseCsrPrivateUse3 = 114 => "SparseCsrPrivateUse3",
    /// Runtime key: `SparseCsr` functionality on the `Meta` backend.
    SparseCsrMeta = 115 => "SparseCsrMeta",
    /// Sentinel: start of the NestedTensor runtime block (`NestedTensor` with `InvalidBit`; prints as `NestedTensorUndefined`).
    StartOfNestedTensorBackends = 116 => "NestedTensorUndefined",
    /// Runtime key: `NestedTensor` functionality on the `CPU` backend.
    NestedTensorCPU = 117 => "NestedTensorCPU",
    /// Runtime key: `NestedTensor` functionality on the `CUDA` backend.
    NestedTensorCUDA = 118 => "NestedTensorCUDA",
    /// Runtime key: `NestedTensor` functionality on the `HIP` backend.
    NestedTensorHIP = 119 => "NestedTensorHIP",
    /// Runtime key: `NestedTensor` functionality on the `XLA` backend.
    NestedTensorXLA = 120 => "NestedTensorXLA",
    /// Runtime key: `NestedTensor` functionality on the `MPS` backend.
    NestedTensorMPS = 121 => "NestedTensorMPS",
    /// Runtime key: `NestedTensor` functionality on the `IPU` backend.
    NestedTensorIPU = 122 => "NestedTensorIPU",
    /// Runtime key: `NestedTensor` functionality on the `XPU` backend.
    NestedTensorXPU = 123 => "NestedTensorXPU",
    /// Runtime key: `NestedTensor` functionality on the `HPU` backend.
    NestedTensorHPU = 124 => "NestedTensorHPU",
    /// Runtime key: `NestedTensor` functionality on the `VE` backend.
    NestedTensorVE = 125 => "NestedTensorVE",
    /// Runtime key: `NestedTensor` functionality on the `Lazy` backend.
    NestedTensorLazy = 126 => "NestedTensorLazy",
    /// Runtime key: `NestedTensor` functionality on the `MTIA` backend.
    NestedTensorMTIA = 127 => "NestedTensorMTIA",
    /// Runtime key: `NestedTensor` functionality on the `MAIA` backend.
    NestedTensorMAIA = 128 => "NestedTensorMAIA",
    /// Runtime key: `NestedTensor` functionality on the `PrivateUse1` backend.
    NestedTensorPrivateUse1 = 129 => "NestedTensorPrivateUse1",
    /// Runtime key: `NestedTensor` functionality on the `PrivateUse2` backend.
    NestedTensorPrivateUse2 = 130 => "NestedTensorPrivateUse2",
    /// Runtime key: `NestedTensor` functionality on the `PrivateUse3` backend.
    NestedTensorPrivateUse3 = 131 => "NestedTensorPrivateUse3",
    /// Runtime key: `NestedTensor` functionality on the `Meta` backend.
    NestedTensorMeta = 132 => "NestedTensorMeta",
    /// Sentinel: start of the AutogradFunctionality runtime block (`AutogradFunctionality` with `InvalidBit`; prints as `AutogradUndefined`).
    StartOfAutogradFunctionalityBackends = 133 => "AutogradUndefined",
    /// Runtime key: `AutogradFunctionality` functionality on the `CPU` backend.
    AutogradCPU = 134 => "AutogradCPU",
    /// Runtime key: `AutogradFunctionality` functionality on the `CUDA` backend.
    AutogradCUDA = 135 => "AutogradCUDA",
    /// Runtime key: `AutogradFunctionality` functionality on the `HIP` backend.
    AutogradHIP = 136 => "AutogradHIP",
    /// Runtime key: `AutogradFunctionality` functionality on the `XLA` backend.
    AutogradXLA = 137 => "AutogradXLA",
    /// Runtime key: `AutogradFunctionality` functionality on the `MPS` backend.
    AutogradMPS = 138 => "AutogradMPS",
    /// Runtime key: `AutogradFunctionality` functionality on the `IPU` backend.
    AutogradIPU = 139 => "AutogradIPU",
    /// Runtime key: `AutogradFunctionality` functionality on the `XPU` backend.
    AutogradXPU = 140 => "AutogradXPU",
    /// Runtime key: `AutogradFunctionality` functionality on the `HPU` backend.
    AutogradHPU = 141 => "AutogradHPU",
    /// Runtime key: `AutogradFunctionality` functionality on the `VE` backend.
    AutogradVE = 142 => "AutogradVE",
    /// Runtime key: `AutogradFunctionality` functionality on the `Lazy` backend.
    AutogradLazy = 143 => "AutogradLazy",
    /// Runtime key: `AutogradFunctionality` functionality on the `MTIA` backend.
    AutogradMTIA = 144 => "AutogradMTIA",
    /// Runtime key: `AutogradFunctionality` functionality on the `MAIA` backend.
    AutogradMAIA = 145 => "AutogradMAIA",
    /// Runtime key: `AutogradFunctionality` functionality on the `PrivateUse1` backend.
    AutogradPrivateUse1 = 146 => "AutogradPrivateUse1",
    /// Runtime key: `AutogradFunctionality` functionality on the `PrivateUse2` backend.
    AutogradPrivateUse2 = 147 => "AutogradPrivateUse2",
    /// Runtime key: `AutogradFunctionality` functionality on the `PrivateUse3` backend.
    AutogradPrivateUse3 = 148 => "AutogradPrivateUse3",
    /// Runtime key: `AutogradFunctionality` functionality on the `Meta` backend.
    AutogradMeta = 149 => "AutogradMeta",
    /// Alias key: all autograd keys (`AutogradOther`, `AutogradNestedTensor` and every `Autograd<Backend>`).
    Autograd = 150 => "Autograd",
    /// Alias key: kernels that decompose into other ops and get autograd for free (formerly `Math`).
    CompositeImplicitAutograd = 151 => "CompositeImplicitAutograd",
    /// Alias key: decompositions registered only for functorch batching.
    FuncTorchBatchedDecomposition = 152 => "FuncTorchBatchedDecomposition",
    /// Alias key: `CompositeImplicitAutograd` for nested tensors.
    CompositeImplicitAutogradNestedTensor = 153 => "CompositeImplicitAutogradNestedTensor",
    /// Alias key: backend-agnostic kernels with an explicit autograd formula (C++ alias `DefaultBackend`).
    CompositeExplicitAutograd = 154 => "CompositeExplicitAutograd",
    /// Alias key: like `CompositeExplicitAutograd`, but the kernel mutates or aliases internally.
    CompositeExplicitAutogradNonFunctional = 155 => "CompositeExplicitAutogradNonFunctional",
}

impl DispatchKey {
    /// C++ alias: `CatchAll == Undefined`.
    pub const CATCH_ALL: DispatchKey = DispatchKey::Undefined;
    /// C++ BC alias: `CPUTensorId == CPU`.
    pub const CPU_TENSOR_ID: DispatchKey = DispatchKey::CPU;
    /// C++ BC alias: `CUDATensorId == CUDA`.
    pub const CUDA_TENSOR_ID: DispatchKey = DispatchKey::CUDA;
    /// C++ BC alias: `DefaultBackend == CompositeExplicitAutograd`.
    pub const DEFAULT_BACKEND: DispatchKey = DispatchKey::CompositeExplicitAutograd;
    /// C++ BC alias: `PrivateUse1_PreAutograd == AutogradPrivateUse1`.
    pub const PRIVATE_USE1_PRE_AUTOGRAD: DispatchKey = DispatchKey::AutogradPrivateUse1;
    /// C++ BC alias: `PrivateUse2_PreAutograd == AutogradPrivateUse2`.
    pub const PRIVATE_USE2_PRE_AUTOGRAD: DispatchKey = DispatchKey::AutogradPrivateUse2;
    /// C++ BC alias: `PrivateUse3_PreAutograd == AutogradPrivateUse3`.
    pub const PRIVATE_USE3_PRE_AUTOGRAD: DispatchKey = DispatchKey::AutogradPrivateUse3;
    /// C++ BC alias: `Autocast == AutocastCUDA`.
    pub const AUTOCAST: DispatchKey = DispatchKey::AutocastCUDA;
    /// `EndOfDenseBackends == Meta`.
    pub const END_OF_DENSE_BACKENDS: DispatchKey = DispatchKey::Meta;
    /// `EndOfQuantizedBackends == QuantizedMeta`.
    pub const END_OF_QUANTIZED_BACKENDS: DispatchKey = DispatchKey::QuantizedMeta;
    /// `EndOfSparseBackends == SparseMeta`.
    pub const END_OF_SPARSE_BACKENDS: DispatchKey = DispatchKey::SparseMeta;
    /// `EndOfSparseCsrBackends == SparseCsrMeta`.
    pub const END_OF_SPARSE_CSR_BACKENDS: DispatchKey = DispatchKey::SparseCsrMeta;
    /// `EndOfNestedTensorBackends == NestedTensorMeta`.
    pub const END_OF_NESTED_TENSOR_BACKENDS: DispatchKey = DispatchKey::NestedTensorMeta;
    /// `EndOfAutogradFunctionalityBackends == AutogradMeta`.
    pub const END_OF_AUTOGRAD_FUNCTIONALITY_BACKENDS: DispatchKey = DispatchKey::AutogradMeta;
    /// `EndOfRuntimeBackendKeys == AutogradMeta` (149).
    pub const END_OF_RUNTIME_BACKEND_KEYS: DispatchKey = DispatchKey::AutogradMeta;
    /// `StartOfAliasKeys == Autograd` (150).
    pub const START_OF_ALIAS_KEYS: DispatchKey = DispatchKey::Autograd;
    /// `EndOfAliasKeys == CompositeExplicitAutogradNonFunctional` (155).
    pub const END_OF_ALIAS_KEYS: DispatchKey = DispatchKey::CompositeExplicitAutogradNonFunctional;

    /// Every key in numeric order (`ALL[i] as u16 == i`).
    pub const ALL: [DispatchKey; DISPATCH_KEY_COUNT] = ALL_DISPATCH_KEYS;

    /// Converts a raw `u16` discriminant; `None` when it is above 155.
    ///
    /// ```
    /// use c10_core::dispatch_key::DispatchKey;
    /// assert_eq!(DispatchKey::from_u16(49), Some(DispatchKey::CPU));
    /// assert_eq!(DispatchKey::from_u16(156), None);
    /// ```
    pub const fn from_u16(v: u16) -> Option<DispatchKey> {
        if (v as usize) < ALL_DISPATCH_KEYS.len() {
            Some(ALL_DISPATCH_KEYS[v as usize])
        } else {
            None
        }
    }

    /// The name c10's `toString(DispatchKey)` prints, e.g. `"CPU"`,
    /// `"AutogradCPU"`, `"ADInplaceOrView"`.
    ///
    /// ```
    /// use c10_core::dispatch_key::DispatchKey;
    /// assert_eq!(DispatchKey::AutogradCPU.name(), "AutogradCPU");
    /// assert_eq!(DispatchKey::ADInplaceOrView.name(), "ADInplaceOrView");
    /// ```
    pub const fn name(self) -> &'static str {
        DISPATCH_KEY_NAMES[self as usize]
    }

    /// Parses a printed key name (c10 `parseDispatchKey`), e.g. `"AutogradCPU"`.
    ///
    /// Sentinel keys (`EndOfFunctionalityKeys`, `StartOf*Backends`) are not
    /// accepted, and `"Undefined"` parses to [`DispatchKey::Undefined`].
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeyError};
    /// assert_eq!(DispatchKey::from_name("AutogradCPU")?, DispatchKey::AutogradCPU);
    /// assert_eq!(DispatchKey::from_name("Undefined")?, DispatchKey::Undefined);
    /// assert!(DispatchKey::from_name("EndOfFunctionalityKeys").is_err()); // a sentinel
    /// # Ok::<(), DispatchKeyError>(())
    /// ```
    pub fn from_name(name: &str) -> Result<DispatchKey, DispatchKeyError> {
        ALL_DISPATCH_KEYS
            .iter()
            .copied()
            .filter(|k| !k.is_sentinel())
            .find(|k| k.name() == name)
            .ok_or_else(|| DispatchKeyError::UnknownKeyName(name.to_owned()))
    }

    /// `true` for `EndOfFunctionalityKeys` and the six `StartOf*Backends`
    /// markers, which exist only to number the enum.
    const fn is_sentinel(self) -> bool {
        let v = self as u16;
        v == DispatchKey::EndOfFunctionalityKeys as u16
            || (v >= DispatchKey::StartOfDenseBackends as u16
                && v <= DispatchKey::END_OF_RUNTIME_BACKEND_KEYS as u16
                && (v - DispatchKey::StartOfDenseBackends as u16)
                    .is_multiple_of(NUM_BACKENDS as u16 + 1))
    }

    /// `true` for the six functionality keys that have one runtime instance
    /// per backend: `Dense`, `Quantized`, `Sparse`, `SparseCsr`,
    /// `NestedTensor`, `AutogradFunctionality` (c10
    /// `isPerBackendFunctionalityKey`).
    ///
    /// ```
    /// use c10_core::dispatch_key::DispatchKey;
    /// assert!(DispatchKey::Dense.is_per_backend_functionality_key());
    /// assert!(DispatchKey::AutogradFunctionality.is_per_backend_functionality_key());
    /// assert!(!DispatchKey::CPU.is_per_backend_functionality_key()); // a runtime key
    /// ```
    pub const fn is_per_backend_functionality_key(self) -> bool {
        matches!(
            self,
            DispatchKey::Dense
                | DispatchKey::Quantized
                | DispatchKey::Sparse
                | DispatchKey::SparseCsr
                | DispatchKey::NestedTensor
                | DispatchKey::AutogradFunctionality
        )
    }

    /// `true` for the alias keys `150..=155` (c10 `isAliasDispatchKey`).
    ///
    /// ```
    /// use c10_core::dispatch_key::DispatchKey;
    /// assert!(DispatchKey::Autograd.is_alias());
    /// assert!(DispatchKey::CompositeImplicitAutograd.is_alias());
    /// assert!(!DispatchKey::AutogradCPU.is_alias());
    /// ```
    pub const fn is_alias(self) -> bool {
        self as u16 >= DispatchKey::START_OF_ALIAS_KEYS as u16
            && self as u16 <= DispatchKey::END_OF_ALIAS_KEYS as u16
    }

    /// `true` for functionality keys `0..=47` (they map to themselves under
    /// [`to_functionality_key`](DispatchKey::to_functionality_key)).
    ///
    /// ```
    /// use c10_core::dispatch_key::DispatchKey;
    /// assert!(DispatchKey::Dense.is_functionality_key());
    /// assert!(!DispatchKey::CPU.is_functionality_key());
    /// assert_eq!(DispatchKey::Dense.to_functionality_key(), DispatchKey::Dense);
    /// ```
    pub const fn is_functionality_key(self) -> bool {
        self as u16 <= DispatchKey::EndOfFunctionalityKeys as u16
    }

    /// The backend of a runtime per-backend key (`key - StartOf<F>Backends`);
    /// [`BackendComponent::InvalidBit`] for every other key (c10
    /// `toBackendComponent(DispatchKey)`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey};
    /// assert_eq!(DispatchKey::AutogradCUDA.to_backend_component(), BackendComponent::CUDABit);
    /// assert_eq!(DispatchKey::SparseCPU.to_backend_component(), BackendComponent::CPUBit);
    /// assert_eq!(DispatchKey::Dense.to_backend_component(), BackendComponent::InvalidBit);
    /// ```
    pub const fn to_backend_component(self) -> BackendComponent {
        let v = self as u16;
        let start = DispatchKey::StartOfDenseBackends as u16;
        if v < start || v > DispatchKey::END_OF_RUNTIME_BACKEND_KEYS as u16 {
            return BackendComponent::InvalidBit;
        }
        // Each block is StartOf<F>Backends followed by the 16 backends in
        // BackendComponent order, so the offset inside the block is the
        // component's discriminant (0 = InvalidBit for the StartOf marker).
        let offset = (v - start) % (NUM_BACKENDS as u16 + 1);
        match BackendComponent::from_u8(offset as u8) {
            Some(b) => b,
            None => BackendComponent::InvalidBit,
        }
    }

    /// The functionality of a key (c10 `toFunctionalityKey`): functionality
    /// keys map to themselves, runtime per-backend keys to their block's
    /// functionality (`AutogradCPU` → `AutogradFunctionality`), alias keys to
    /// `Undefined`.
    ///
    /// ```
    /// use c10_core::dispatch_key::DispatchKey;
    /// assert_eq!(DispatchKey::AutogradCPU.to_functionality_key(), DispatchKey::AutogradFunctionality);
    /// assert_eq!(DispatchKey::SparseCUDA.to_functionality_key(), DispatchKey::Sparse);
    /// assert_eq!(DispatchKey::Autograd.to_functionality_key(), DispatchKey::Undefined);
    /// ```
    pub const fn to_functionality_key(self) -> DispatchKey {
        let v = self as u16;
        if v <= DispatchKey::EndOfFunctionalityKeys as u16 {
            self
        } else if v <= DispatchKey::END_OF_DENSE_BACKENDS as u16 {
            DispatchKey::Dense
        } else if v <= DispatchKey::END_OF_QUANTIZED_BACKENDS as u16 {
            DispatchKey::Quantized
        } else if v <= DispatchKey::END_OF_SPARSE_BACKENDS as u16 {
            DispatchKey::Sparse
        } else if v <= DispatchKey::END_OF_SPARSE_CSR_BACKENDS as u16 {
            DispatchKey::SparseCsr
        } else if v <= DispatchKey::END_OF_NESTED_TENSOR_BACKENDS as u16 {
            DispatchKey::NestedTensor
        } else if v <= DispatchKey::END_OF_AUTOGRAD_FUNCTIONALITY_BACKENDS as u16 {
            DispatchKey::AutogradFunctionality
        } else {
            DispatchKey::Undefined
        }
    }

    /// The runtime key of a per-backend functionality on a backend (c10
    /// `toRuntimePerBackendFunctionalityKey`): `(Dense, CPUBit)` → `CPU`,
    /// `(AutogradFunctionality, MetaBit)` → `AutogradMeta`. With
    /// `InvalidBit` it yields the block's `StartOf<F>Backends` marker; for a
    /// functionality that is not per-backend it yields `Undefined`.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey};
    /// assert_eq!(
    ///     DispatchKey::to_runtime_per_backend_functionality_key(
    ///         DispatchKey::Sparse,
    ///         BackendComponent::CUDABit
    ///     ),
    ///     DispatchKey::SparseCUDA
    /// );
    /// ```
    pub const fn to_runtime_per_backend_functionality_key(
        functionality: DispatchKey,
        backend: BackendComponent,
    ) -> DispatchKey {
        let start = match functionality {
            DispatchKey::Dense => DispatchKey::StartOfDenseBackends,
            DispatchKey::Quantized => DispatchKey::StartOfQuantizedBackends,
            DispatchKey::Sparse => DispatchKey::StartOfSparseBackends,
            DispatchKey::SparseCsr => DispatchKey::StartOfSparseCsrBackends,
            DispatchKey::NestedTensor => DispatchKey::StartOfNestedTensorBackends,
            DispatchKey::AutogradFunctionality => DispatchKey::StartOfAutogradFunctionalityBackends,
            _ => return DispatchKey::Undefined,
        };
        match DispatchKey::from_u16(start as u16 + backend as u16) {
            Some(k) => k,
            None => DispatchKey::Undefined,
        }
    }
}

impl fmt::Display for DispatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DispatchKey {
    type Err = DispatchKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DispatchKey::from_name(s)
    }
}

impl TryFrom<u16> for DispatchKey {
    type Error = DispatchKeyError;

    fn try_from(v: u16) -> Result<Self, Self::Error> {
        DispatchKey::from_u16(v).ok_or(DispatchKeyError::InvalidKeyValue(v))
    }
}

impl From<DispatchKey> for u16 {
    fn from(k: DispatchKey) -> u16 {
        k as u16
    }
}

// ---------------------------------------------------------------------------
// DispatchKeySet
// ---------------------------------------------------------------------------

/// A set of dispatch keys packed into a `u64` (c10 `DispatchKeySet`).
///
/// Layout: backend component `b` (1..=16) is bit `b - 1`; functionality key
/// `k` (1..=47) is bit `15 + k`. A runtime per-backend key such as `CPU` is
/// represented by its functionality bit (`Dense`, bit 16) *plus* its backend
/// bit (`CPUBit`, bit 0), so `DispatchKeySet::from_key(CPU).raw() == 0x10001`.
/// Because the representation is a cross product, a set holding
/// `{CPU, AutogradCUDA}` also "has" `CUDA` and `AutogradCPU`.
///
/// Removal ([`remove`](DispatchKeySet::remove) and `-`) only ever clears
/// functionality bits; clear a backend bit with
/// [`remove_backend`](DispatchKeySet::remove_backend).
///
/// `Display` and `Debug` both print c10's `operator<<` form, listing the
/// runtime keys in ascending priority:
///
/// ```
/// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
///
/// let ks = DispatchKeySet::from_key(DispatchKey::CPU) | DispatchKeySet::from_key(DispatchKey::CUDA);
/// assert_eq!(format!("{ks}"), "DispatchKeySet(CPU, CUDA)");
/// assert_eq!(ks.highest_priority_type_id(), DispatchKey::CUDA);
/// // Removing CUDA clears the shared Dense bit but keeps both backend bits.
/// let removed = ks.remove(DispatchKey::CUDA);
/// assert_eq!(removed.raw(), 0x3);
/// assert_eq!(format!("{removed:?}"), "DispatchKeySet()");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct DispatchKeySet {
    repr: u64,
}

/// Bit of a functionality key `k` (1..=47): `15 + k`.
const fn functionality_bit(k: DispatchKey) -> u64 {
    1u64 << (NUM_BACKENDS as u32 + k as u32 - 1)
}

impl DispatchKeySet {
    /// The empty set (an undefined tensor's key set).
    pub const EMPTY: DispatchKeySet = DispatchKeySet { repr: 0 };

    /// Every backend bit and every functionality bit (c10 `FULL`): bits
    /// `0..=61`, i.e. `(1 << (16 + 47 - 1)) - 1`.
    pub const FULL: DispatchKeySet = DispatchKeySet {
        repr: (1u64 << (NUM_BACKENDS as u32 + NUM_FUNCTIONALITY_KEYS as u32 - 1)) - 1,
    };

    /// The set with exactly the given raw representation (c10
    /// `DispatchKeySet(RAW, x)` / `from_raw_repr`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_raw(0x10001);
    /// assert_eq!(ks, DispatchKeySet::from_key(DispatchKey::CPU));
    /// ```
    pub const fn from_raw(repr: u64) -> DispatchKeySet {
        DispatchKeySet { repr }
    }

    /// The raw `u64` representation (c10 `raw_repr()`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKeySet};
    /// assert_eq!(DispatchKeySet::EMPTY.raw(), 0);
    /// assert_eq!(DispatchKeySet::from_backend(BackendComponent::CPUBit).raw(), 1);
    /// ```
    pub const fn raw(self) -> u64 {
        self.repr
    }

    /// The set containing one key (c10 `DispatchKeySet(DispatchKey)`):
    ///
    /// * `Undefined` → empty;
    /// * a functionality key → its bit;
    /// * a runtime per-backend key → its functionality bit plus its backend
    ///   bit (only the functionality bit for a `StartOf*Backends` marker);
    /// * an alias key → empty.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// assert_eq!(DispatchKeySet::from_key(DispatchKey::CPU).raw(), 0x10001);
    /// assert_eq!(DispatchKeySet::from_key(DispatchKey::AutogradCPU).raw(), 0x10_0000_0001);
    /// assert_eq!(DispatchKeySet::from_key(DispatchKey::Autograd).raw(), 0);
    /// ```
    pub const fn from_key(k: DispatchKey) -> DispatchKeySet {
        let v = k as u16;
        if v == DispatchKey::Undefined as u16 {
            DispatchKeySet::EMPTY
        } else if v <= DispatchKey::EndOfFunctionalityKeys as u16 {
            DispatchKeySet {
                repr: functionality_bit(k),
            }
        } else if v <= DispatchKey::END_OF_RUNTIME_BACKEND_KEYS as u16 {
            let functionality = functionality_bit(k.to_functionality_key());
            let backend = DispatchKeySet::from_backend(k.to_backend_component()).repr;
            DispatchKeySet {
                repr: functionality | backend,
            }
        } else {
            DispatchKeySet::EMPTY
        }
    }

    /// The set containing every key in `keys` (c10's initializer-list
    /// constructor).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::CUDA]);
    /// assert_eq!(ks.raw(), 0x10003); // Dense plus the CPU and CUDA backend bits
    /// assert!(ks.has(DispatchKey::CPU) && ks.has(DispatchKey::CUDA));
    /// ```
    pub const fn from_keys(keys: &[DispatchKey]) -> DispatchKeySet {
        let mut repr = 0;
        let mut i = 0;
        while i < keys.len() {
            repr |= DispatchKeySet::from_key(keys[i]).repr;
            i += 1;
        }
        DispatchKeySet { repr }
    }

    /// The set containing one backend bit (empty for `InvalidBit`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKeySet};
    /// assert_eq!(DispatchKeySet::from_backend(BackendComponent::CUDABit).raw(), 0b10);
    /// assert!(DispatchKeySet::from_backend(BackendComponent::InvalidBit).is_empty());
    /// ```
    pub const fn from_backend(b: BackendComponent) -> DispatchKeySet {
        match b {
            BackendComponent::InvalidBit => DispatchKeySet::EMPTY,
            _ => DispatchKeySet {
                repr: 1u64 << (b as u32 - 1),
            },
        }
    }

    /// The dense runtime key of backend `b` as a set, e.g. `{CPU}` for
    /// `CPUBit` (what `empty_cpu` and friends pass to the `TensorImpl`
    /// constructor). For `InvalidBit` only the `Dense` bit is set, so
    /// [`for_new_tensor`](DispatchKeySet::for_new_tensor) picks
    /// `AutogradOther` and no autocast key.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey, DispatchKeySet};
    /// assert_eq!(
    ///     DispatchKeySet::dense_backend(BackendComponent::MetaBit),
    ///     DispatchKeySet::from_key(DispatchKey::Meta)
    /// );
    /// ```
    pub const fn dense_backend(b: BackendComponent) -> DispatchKeySet {
        DispatchKeySet::from_key(DispatchKey::to_runtime_per_backend_functionality_key(
            DispatchKey::Dense,
            b,
        ))
    }

    /// The set containing every backend bit in `backends`.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKeySet};
    /// let ks = DispatchKeySet::from_backends(&[BackendComponent::CPUBit, BackendComponent::CUDABit]);
    /// assert_eq!(ks.raw(), 0b11);
    /// assert!(ks.has_backend(BackendComponent::CUDABit));
    /// ```
    pub const fn from_backends(backends: &[BackendComponent]) -> DispatchKeySet {
        let mut repr = 0;
        let mut i = 0;
        while i < backends.len() {
            repr |= DispatchKeySet::from_backend(backends[i]).repr;
            i += 1;
        }
        DispatchKeySet { repr }
    }

    /// c10 `DispatchKeySet(FULL_AFTER, t)`: every bit strictly below the
    /// functionality bit of `t` (all backend bits included) plus
    /// `PythonDispatcher`. Used to redispatch "below" a key.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let after = DispatchKeySet::full_after(DispatchKey::ADInplaceOrView);
    /// assert!(after.has(DispatchKey::CPU));
    /// assert!(!after.has(DispatchKey::ADInplaceOrView));
    /// assert!(after.has(DispatchKey::PythonDispatcher));
    /// ```
    pub const fn full_after(t: DispatchKey) -> DispatchKeySet {
        let shift = NUM_BACKENDS as u32 + t.to_functionality_key() as u32 - 1;
        DispatchKeySet {
            repr: ((1u64 << shift) - 1) | functionality_bit(DispatchKey::PythonDispatcher),
        }
    }

    /// `true` when `repr == 0` (an undefined tensor). Note that a set with only
    /// backend bits is *not* empty although it prints as `DispatchKeySet()`.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKeySet};
    /// assert!(DispatchKeySet::EMPTY.is_empty());
    /// let backend_only = DispatchKeySet::from_backend(BackendComponent::CPUBit);
    /// assert!(!backend_only.is_empty());
    /// assert_eq!(backend_only.to_string(), "DispatchKeySet()");
    /// ```
    pub const fn is_empty(self) -> bool {
        self.repr == 0
    }

    /// Whether every bit of `ks` is in `self` (c10 `has_all` /
    /// `isSupersetOf`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let cpu = DispatchKeySet::from_key(DispatchKey::CPU);
    /// let both = cpu.add(DispatchKey::AutogradCPU);
    /// assert!(both.has_all(cpu));
    /// assert!(!cpu.has_all(both));
    /// ```
    pub const fn has_all(self, ks: DispatchKeySet) -> bool {
        self.repr & ks.repr == ks.repr
    }

    /// Whether `k` is in the set: `has_all(from_key(k))`. A runtime key needs
    /// both its functionality bit and its backend bit. c10 debug-asserts
    /// `k != Undefined`; here `has(Undefined)` is simply `true` (the empty
    /// set is a subset of everything).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_key(DispatchKey::CPU);
    /// assert!(ks.has(DispatchKey::CPU));
    /// assert!(ks.has(DispatchKey::Dense)); // the functionality bit alone
    /// assert!(!ks.has(DispatchKey::CUDA)); // no CUDA backend bit
    /// ```
    pub const fn has(self, k: DispatchKey) -> bool {
        self.has_all(DispatchKeySet::from_key(k))
    }

    /// Whether the backend bit `b` is set (`true` for `InvalidBit`, like
    /// [`has`](DispatchKeySet::has) with `Undefined`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_key(DispatchKey::CUDA);
    /// assert!(ks.has_backend(BackendComponent::CUDABit));
    /// assert!(!ks.has_backend(BackendComponent::CPUBit));
    /// ```
    pub const fn has_backend(self, b: BackendComponent) -> bool {
        self.has_all(DispatchKeySet::from_backend(b))
    }

    /// Whether any bit of `ks` is in `self`.
    ///
    /// As in c10, `ks` should not mix backend bits with per-backend
    /// functionality bits (`from_key(AutogradCPU).has_any(from_key(CPU))` is
    /// `true` because they share `CPUBit`). c10 only checks that in debug
    /// builds; this port does not check it.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    /// assert!(ks.has_any(DispatchKeySet::from_key(DispatchKey::AutogradFunctionality)));
    /// assert!(!ks.has_any(DispatchKeySet::from_key(DispatchKey::Sparse)));
    /// ```
    pub const fn has_any(self, ks: DispatchKeySet) -> bool {
        self.repr & ks.repr != 0
    }

    /// The set with `k` added (c10 `add`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::EMPTY.add(DispatchKey::CPU).add(DispatchKey::AutogradCPU);
    /// assert_eq!(ks.to_string(), "DispatchKeySet(CPU, AutogradCPU)");
    /// ```
    #[must_use]
    pub const fn add(self, k: DispatchKey) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr | DispatchKeySet::from_key(k).repr,
        }
    }

    /// The set with the backend bit `b` added.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_key(DispatchKey::CPU).add_backend(BackendComponent::CUDABit);
    /// assert!(ks.has(DispatchKey::CUDA)); // `Dense` now applies to both backends
    /// ```
    #[must_use]
    pub const fn add_backend(self, b: BackendComponent) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr | DispatchKeySet::from_backend(b).repr,
        }
    }

    /// The set with the *functionality* bit of `k` cleared (c10 `remove`).
    /// Backend bits are never cleared, so `{CPU, CUDA}.remove(CUDA)` keeps
    /// both backend bits and loses `Dense` (it prints `DispatchKeySet()`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    /// assert_eq!(ks.remove(DispatchKey::AutogradCPU), DispatchKeySet::from_key(DispatchKey::CPU));
    /// ```
    #[must_use]
    pub const fn remove(self, k: DispatchKey) -> DispatchKeySet {
        let functionality_only = DispatchKeySet::from_key(k).repr & !FULL_BACKEND_MASK;
        DispatchKeySet {
            repr: self.repr & !functionality_only,
        }
    }

    /// The set with the backend bit `b` cleared (c10 `remove_backend`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::CUDA]);
    /// let cpu_only = ks.remove_backend(BackendComponent::CUDABit);
    /// assert_eq!(cpu_only, DispatchKeySet::from_key(DispatchKey::CPU));
    /// ```
    #[must_use]
    pub const fn remove_backend(self, b: BackendComponent) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr & !DispatchKeySet::from_backend(b).repr,
        }
    }

    /// Set union (same as `|`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let a = DispatchKeySet::from_key(DispatchKey::CPU);
    /// let b = DispatchKeySet::from_key(DispatchKey::AutogradCPU);
    /// assert_eq!(a.union(b), a | b);
    /// assert!(a.union(b).has(DispatchKey::AutogradCPU));
    /// ```
    #[must_use]
    pub const fn union(self, other: DispatchKeySet) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr | other.repr,
        }
    }

    /// Set intersection (same as `&`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let a = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    /// let b = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutocastCPU]);
    /// assert_eq!(a.intersection(b), DispatchKeySet::from_key(DispatchKey::CPU));
    /// assert_eq!(a.intersection(b), a & b);
    /// ```
    #[must_use]
    pub const fn intersection(self, other: DispatchKeySet) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr & other.repr,
        }
    }

    /// c10's `operator-`: clears the functionality bits of `other`, never
    /// backend bits (`repr & (FULL_BACKEND_MASK | !other)`). Same as `-`.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    /// let autograd = DispatchKeySet::from_key(DispatchKey::AutogradCPU);
    /// assert_eq!(ks.difference(autograd), DispatchKeySet::from_key(DispatchKey::CPU)); // CPUBit kept
    /// assert_eq!(ks.difference(autograd), ks - autograd);
    /// ```
    #[must_use]
    pub const fn difference(self, other: DispatchKeySet) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr & (FULL_BACKEND_MASK | !other.repr),
        }
    }

    /// `bit_width(repr)`: one plus the index of the highest set bit, 0 for
    /// the empty set (c10 `indexOfHighestBit`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKeySet};
    /// assert_eq!(DispatchKeySet::EMPTY.index_of_highest_bit(), 0);
    /// assert_eq!(DispatchKeySet::from_backend(BackendComponent::CUDABit).index_of_highest_bit(), 2);
    /// ```
    pub const fn index_of_highest_bit(self) -> u8 {
        (u64::BITS - self.repr.leading_zeros()) as u8
    }

    /// The highest-priority functionality key in the set, or `Undefined` if
    /// no functionality bit is set (c10 `highestFunctionalityKey`). For a
    /// set holding `CPU` this is `Dense`.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    /// assert_eq!(ks.highest_functionality_key(), DispatchKey::AutogradFunctionality);
    /// assert_eq!(DispatchKeySet::from_key(DispatchKey::CPU).highest_functionality_key(), DispatchKey::Dense);
    /// ```
    pub const fn highest_functionality_key(self) -> DispatchKey {
        let idx = self.index_of_highest_bit();
        if idx < NUM_BACKENDS {
            return DispatchKey::Undefined;
        }
        // idx <= 64, so the key value is at most 48 and always valid.
        match DispatchKey::from_u16((idx - NUM_BACKENDS) as u16) {
            Some(k) => k,
            None => DispatchKey::Undefined,
        }
    }

    /// The highest backend bit in the set, or `InvalidBit` if none (c10
    /// `highestBackendKey`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::CUDA]);
    /// assert_eq!(ks.highest_backend_key(), BackendComponent::CUDABit);
    /// assert_eq!(DispatchKeySet::EMPTY.highest_backend_key(), BackendComponent::InvalidBit);
    /// ```
    pub const fn highest_backend_key(self) -> BackendComponent {
        let idx = DispatchKeySet {
            repr: self.repr & FULL_BACKEND_MASK,
        }
        .index_of_highest_bit();
        match BackendComponent::from_u8(idx) {
            Some(b) => b,
            None => BackendComponent::InvalidBit,
        }
    }

    /// The key a dispatcher would pick (c10 `highestPriorityTypeId`): the
    /// highest functionality key, turned into a runtime key with the
    /// highest backend bit when it is a per-backend functionality.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    /// assert_eq!(ks.highest_priority_type_id(), DispatchKey::AutogradCPU);
    /// ```
    pub const fn highest_priority_type_id(self) -> DispatchKey {
        let functionality = self.highest_functionality_key();
        if functionality.is_per_backend_functionality_key() {
            DispatchKey::to_runtime_per_backend_functionality_key(
                functionality,
                self.highest_backend_key(),
            )
        } else {
            functionality
        }
    }

    /// The highest-priority "backend" key, counting `Sparse`, `Quantized`
    /// and `SparseCsr` as backends (c10 `highestPriorityBackendTypeId`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::SparseCPU, DispatchKey::AutogradCPU]);
    /// assert_eq!(ks.highest_priority_type_id(), DispatchKey::AutogradCPU);
    /// assert_eq!(ks.highest_priority_backend_type_id(), DispatchKey::SparseCPU);
    /// ```
    pub const fn highest_priority_backend_type_id(self) -> DispatchKey {
        self.intersection(BACKEND_FUNCTIONALITY_KEYS)
            .highest_priority_type_id()
    }

    /// c10 `legacyExtractDispatchKey`: the highest key after dropping
    /// autograd, `ADInplaceOrView`, autocast and the functorch/Python
    /// wrapper keys, e.g. `CPU` for an ordinary CPU tensor.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(DispatchKey::CPU), false);
    /// assert_eq!(ks.highest_priority_type_id(), DispatchKey::AutocastCPU);
    /// assert_eq!(ks.legacy_extract_dispatch_key(), DispatchKey::CPU);
    /// ```
    pub const fn legacy_extract_dispatch_key(self) -> DispatchKey {
        self.difference(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW)
            .difference(AUTOCAST_DISPATCH_KEYSET)
            .difference(DispatchKeySet::from_keys(&[
                DispatchKey::Functionalize,
                DispatchKey::PythonTLSSnapshot,
                DispatchKey::FuncTorchGradWrapper,
                DispatchKey::FuncTorchVmapMode,
                DispatchKey::FuncTorchBatched,
                DispatchKey::Python,
            ]))
            .highest_priority_type_id()
    }

    /// The key set of a newly constructed `TensorImpl` whose factory passed
    /// `backend_keys` (e.g. `{CPU}`, `{Meta}`, `{SparseCPU}`), following c10's
    /// `TensorImpl` constructor:
    ///
    /// 1. `b = backend_keys.highest_backend_key()`;
    /// 2. add [`autocast_related_keyset_from_backend`]`(b)`;
    /// 3. remove [`PYTHON_KS`] (Python keys are only added when a Python
    ///    subclass object is attached);
    /// 4. outside inference mode add
    ///    [`autograd_related_keyset_from_backend`]`(b)` (`ADInplaceOrView` +
    ///    the backend's autograd key); in inference mode instead remove
    ///    [`AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW`].
    ///
    /// `requires_grad` does not influence the result.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let meta = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(DispatchKey::Meta), false);
    /// assert_eq!(meta.to_string(), "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)");
    /// let inference = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(DispatchKey::CPU), true);
    /// assert_eq!(inference.raw(), 0x80_0001_0001);
    /// assert!(inference.is_inference());
    /// ```
    pub const fn for_new_tensor(
        backend_keys: DispatchKeySet,
        inference_mode: bool,
    ) -> DispatchKeySet {
        let b = backend_keys.highest_backend_key();
        let ks = backend_keys
            .union(autocast_related_keyset_from_backend(b))
            .difference(PYTHON_KS);
        if inference_mode {
            ks.difference(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW)
        } else {
            ks.union(autograd_related_keyset_from_backend(b))
        }
    }

    /// Whether a tensor with this key set is an inference tensor: it has
    /// neither `ADInplaceOrView` nor any autograd key (c10
    /// `TensorImpl::is_inference`).
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let cpu = DispatchKeySet::from_key(DispatchKey::CPU);
    /// assert!(!DispatchKeySet::for_new_tensor(cpu, false).is_inference());
    /// assert!(DispatchKeySet::for_new_tensor(cpu, true).is_inference());
    /// ```
    pub const fn is_inference(self) -> bool {
        !self.has_any(INPLACE_OR_VIEW_KS) && !self.has_any(AUTOGRAD_DISPATCH_KEYSET)
    }

    /// Moves a tensor's key set to another backend, as c10's
    /// `TensorImpl::_change_backend_component_keys` does: swaps the autocast
    /// key of the old highest backend for the new backend's, clears the old
    /// backend bit and sets the new one. Per-backend functionality bits
    /// (`Dense`, `AutogradFunctionality`, ...) follow automatically.
    ///
    /// ```
    /// use c10_core::dispatch_key::{BackendComponent, DispatchKey, DispatchKeySet};
    /// let new = |k| DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(k), false);
    /// let moved = new(DispatchKey::CPU).change_backend_component_keys(BackendComponent::CUDABit);
    /// assert_eq!(moved, new(DispatchKey::CUDA));
    /// ```
    #[must_use]
    pub const fn change_backend_component_keys(
        self,
        new_backend: BackendComponent,
    ) -> DispatchKeySet {
        let old_backend = self.highest_backend_key();
        self.difference(autocast_related_keyset_from_backend(old_backend))
            .union(autocast_related_keyset_from_backend(new_backend))
            .remove_backend(old_backend)
            .union(DispatchKeySet::from_backend(new_backend))
    }

    /// Iterates over the runtime keys in the set in c10's order: ascending
    /// functionality bit; a per-backend functionality yields one runtime key
    /// per set backend bit (ascending) and nothing if no backend bit is set.
    ///
    /// ```
    /// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
    /// let ks = DispatchKeySet::from_keys(&[DispatchKey::AutogradCUDA, DispatchKey::CPU]);
    /// let keys: Vec<_> = ks.iter().collect();
    /// assert_eq!(
    ///     keys,
    ///     [DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA]
    /// );
    /// ```
    pub const fn iter(self) -> DispatchKeySetIter {
        DispatchKeySetIter {
            repr: self.repr,
            functionality_bit: NUM_BACKENDS,
            backend_bit: 0,
        }
    }
}

impl BitOr for DispatchKeySet {
    type Output = DispatchKeySet;
    fn bitor(self, rhs: DispatchKeySet) -> DispatchKeySet {
        self.union(rhs)
    }
}

impl BitOrAssign for DispatchKeySet {
    fn bitor_assign(&mut self, rhs: DispatchKeySet) {
        *self = self.union(rhs);
    }
}

impl BitAnd for DispatchKeySet {
    type Output = DispatchKeySet;
    fn bitand(self, rhs: DispatchKeySet) -> DispatchKeySet {
        self.intersection(rhs)
    }
}

impl BitAndAssign for DispatchKeySet {
    fn bitand_assign(&mut self, rhs: DispatchKeySet) {
        *self = self.intersection(rhs);
    }
}

impl BitXor for DispatchKeySet {
    type Output = DispatchKeySet;
    fn bitxor(self, rhs: DispatchKeySet) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr ^ rhs.repr,
        }
    }
}

impl BitXorAssign for DispatchKeySet {
    fn bitxor_assign(&mut self, rhs: DispatchKeySet) {
        self.repr ^= rhs.repr;
    }
}

/// c10's `operator-`: see [`DispatchKeySet::difference`] (backend bits are
/// never cleared).
impl Sub for DispatchKeySet {
    type Output = DispatchKeySet;
    fn sub(self, rhs: DispatchKeySet) -> DispatchKeySet {
        self.difference(rhs)
    }
}

impl SubAssign for DispatchKeySet {
    fn sub_assign(&mut self, rhs: DispatchKeySet) {
        *self = self.difference(rhs);
    }
}

impl From<DispatchKey> for DispatchKeySet {
    fn from(k: DispatchKey) -> DispatchKeySet {
        DispatchKeySet::from_key(k)
    }
}

impl From<BackendComponent> for DispatchKeySet {
    fn from(b: BackendComponent) -> DispatchKeySet {
        DispatchKeySet::from_backend(b)
    }
}

impl FromIterator<DispatchKey> for DispatchKeySet {
    fn from_iter<I: IntoIterator<Item = DispatchKey>>(iter: I) -> DispatchKeySet {
        iter.into_iter()
            .fold(DispatchKeySet::EMPTY, DispatchKeySet::add)
    }
}

impl IntoIterator for DispatchKeySet {
    type Item = DispatchKey;
    type IntoIter = DispatchKeySetIter;
    fn into_iter(self) -> DispatchKeySetIter {
        self.iter()
    }
}

impl fmt::Display for DispatchKeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DispatchKeySet(")?;
        for (i, k) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(k.name())?;
        }
        f.write_str(")")
    }
}

/// Same text as `Display` (c10 only has one printed form).
impl fmt::Debug for DispatchKeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Iterator over the runtime keys of a [`DispatchKeySet`]; see
/// [`DispatchKeySet::iter`].
///
/// ```
/// use c10_core::dispatch_key::{DispatchKey, DispatchKeySet};
/// let mut it = DispatchKeySet::from_key(DispatchKey::CUDA).iter();
/// assert_eq!(it.next(), Some(DispatchKey::CUDA));
/// assert_eq!(it.next(), None);
/// ```
#[derive(Debug, Clone)]
pub struct DispatchKeySetIter {
    repr: u64,
    /// Next functionality bit index to examine (16..=64; 64 = done).
    functionality_bit: u8,
    /// Next backend bit index to examine for the current per-backend
    /// functionality (0..=16).
    backend_bit: u8,
}

impl Iterator for DispatchKeySetIter {
    type Item = DispatchKey;

    fn next(&mut self) -> Option<DispatchKey> {
        while self.functionality_bit < 64 {
            let bit = self.functionality_bit;
            if self.repr & (1u64 << bit) == 0 {
                self.functionality_bit += 1;
                self.backend_bit = 0;
                continue;
            }
            // Bit 15 + k holds functionality key k.
            let key = DispatchKey::from_u16((bit - NUM_BACKENDS + 1) as u16)?;
            if !key.is_per_backend_functionality_key() {
                self.functionality_bit += 1;
                self.backend_bit = 0;
                return Some(key);
            }
            // Per-backend functionality: one runtime key per backend bit.
            while self.backend_bit < NUM_BACKENDS {
                let b = self.backend_bit;
                self.backend_bit += 1;
                if self.repr & (1u64 << b) != 0 {
                    if let Some(backend) = BackendComponent::from_u8(b + 1) {
                        return Some(DispatchKey::to_runtime_per_backend_functionality_key(
                            key, backend,
                        ));
                    }
                }
            }
            self.functionality_bit += 1;
            self.backend_bit = 0;
        }
        None
    }
}

impl FusedIterator for DispatchKeySetIter {}

// ---------------------------------------------------------------------------
// Named key sets (c10 DispatchKeySet.h)
// ---------------------------------------------------------------------------

/// `{AutogradFunctionality, AutogradOther, AutogradNestedTensor}`; has no
/// backend bits so it can be subtracted from a tensor's key set.
pub const AUTOGRAD_DISPATCH_KEYSET: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::AutogradFunctionality,
    DispatchKey::AutogradOther,
    DispatchKey::AutogradNestedTensor,
]);

/// The ten autocast keys.
pub const AUTOCAST_DISPATCH_KEYSET: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::AutocastCPU,
    DispatchKey::AutocastMPS,
    DispatchKey::AutocastCUDA,
    DispatchKey::AutocastXPU,
    DispatchKey::AutocastIPU,
    DispatchKey::AutocastHPU,
    DispatchKey::AutocastXLA,
    DispatchKey::AutocastPrivateUse1,
    DispatchKey::AutocastMTIA,
    DispatchKey::AutocastMAIA,
]);

/// Thread-local included set at startup: `{BackendSelect, ADInplaceOrView}`.
pub const DEFAULT_INCLUDED_SET: DispatchKeySet =
    DispatchKeySet::from_keys(&[DispatchKey::BackendSelect, DispatchKey::ADInplaceOrView]);

/// Thread-local excluded set at startup: the ten autocast keys (which is why
/// the autocast key on every tensor is inert until autocast is enabled).
pub const DEFAULT_EXCLUDED_SET: DispatchKeySet = AUTOCAST_DISPATCH_KEYSET;

/// [`AUTOGRAD_DISPATCH_KEYSET`] plus `ADInplaceOrView`.
pub const AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW: DispatchKeySet =
    AUTOGRAD_DISPATCH_KEYSET.add(DispatchKey::ADInplaceOrView);

/// `{Python, PythonTLSSnapshot}`.
pub const PYTHON_KS: DispatchKeySet =
    DispatchKeySet::from_keys(&[DispatchKey::Python, DispatchKey::PythonTLSSnapshot]);

/// `{Sparse}` (functionality bit only).
pub const SPARSE_KS: DispatchKeySet = DispatchKeySet::from_key(DispatchKey::Sparse);

/// `{SparseCsr}` (functionality bit only).
pub const SPARSE_CSR_KS: DispatchKeySet = DispatchKeySet::from_key(DispatchKey::SparseCsr);

/// `{MkldnnCPU}`.
pub const MKLDNN_KS: DispatchKeySet = DispatchKeySet::from_key(DispatchKey::MkldnnCPU);

/// Backends whose autograd key is `AutogradOther`: `{FPGA, Vulkan, Metal,
/// CustomRNGKeyId, MkldnnCPU, Sparse, SparseCsr, Quantized}` plus every
/// backend bit.
pub const AUTOGRADOTHER_BACKENDS: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::FPGA,
    DispatchKey::Vulkan,
    DispatchKey::Metal,
    DispatchKey::CustomRNGKeyId,
    DispatchKey::MkldnnCPU,
    DispatchKey::Sparse,
    DispatchKey::SparseCsr,
    DispatchKey::Quantized,
])
.union(DispatchKeySet::from_raw(FULL_BACKEND_MASK));

/// Everything that dispatches after autograd: `full_after(AutogradOther)`.
pub const AFTER_AUTOGRAD_KEYSET: DispatchKeySet =
    DispatchKeySet::full_after(DispatchKey::AutogradOther);

/// Everything that dispatches after `ADInplaceOrView`.
pub const AFTER_AD_INPLACE_OR_VIEW_KEYSET: DispatchKeySet =
    DispatchKeySet::full_after(DispatchKey::ADInplaceOrView);

/// Everything that dispatches after `Functionalize`, minus `ADInplaceOrView`.
pub const AFTER_FUNC_KEYSET: DispatchKeySet =
    DispatchKeySet::full_after(DispatchKey::Functionalize).remove(DispatchKey::ADInplaceOrView);

/// All backend bits (`0xFFFF`).
pub const BACKEND_BITSET_MASK: DispatchKeySet = DispatchKeySet::from_raw(FULL_BACKEND_MASK);

/// `{ADInplaceOrView}`.
pub const INPLACE_OR_VIEW_KS: DispatchKeySet =
    DispatchKeySet::from_key(DispatchKey::ADInplaceOrView);

/// Keys of functorch transforms with their own `TensorImpl` subclass:
/// `{FuncTorchBatched, FuncTorchVmapMode, Batched, VmapMode,
/// FuncTorchGradWrapper}`.
pub const FUNCTORCH_TRANSFORMS_KS: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::FuncTorchBatched,
    DispatchKey::FuncTorchVmapMode,
    DispatchKey::Batched,
    DispatchKey::VmapMode,
    DispatchKey::FuncTorchGradWrapper,
]);

/// `{FuncTorchBatched}`.
pub const FUNCTORCH_BATCHED_KS: DispatchKeySet =
    DispatchKeySet::from_key(DispatchKey::FuncTorchBatched);

/// The functionality bits that stand for backends (`Dense`, `Quantized`,
/// `Sparse`, `SparseCsr`) plus every backend bit.
pub const BACKEND_FUNCTIONALITY_KEYS: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::Dense,
    DispatchKey::Quantized,
    DispatchKey::Sparse,
    DispatchKey::SparseCsr,
])
.union(DispatchKeySet::from_raw(FULL_BACKEND_MASK));

/// `ADInplaceOrView` plus the backend's autograd key (c10
/// `getAutogradRelatedKeySetFromBackend`): `Autograd<B>` for CPU, IPU, MTIA,
/// MAIA, XPU, CUDA, XLA, Lazy, Meta, MPS, HPU and PrivateUse1/2/3;
/// `AutogradOther` for every other backend (HIP, VE, `InvalidBit`).
///
/// ```
/// use c10_core::dispatch_key::{autograd_related_keyset_from_backend, BackendComponent, DispatchKey};
/// let ks = autograd_related_keyset_from_backend(BackendComponent::CPUBit);
/// assert!(ks.has(DispatchKey::ADInplaceOrView) && ks.has(DispatchKey::AutogradCPU));
/// let hip = autograd_related_keyset_from_backend(BackendComponent::HIPBit);
/// assert!(hip.has(DispatchKey::AutogradOther));
/// ```
pub const fn autograd_related_keyset_from_backend(b: BackendComponent) -> DispatchKeySet {
    let autograd = match b {
        BackendComponent::CPUBit
        | BackendComponent::IPUBit
        | BackendComponent::MTIABit
        | BackendComponent::MAIABit
        | BackendComponent::XPUBit
        | BackendComponent::CUDABit
        | BackendComponent::XLABit
        | BackendComponent::LazyBit
        | BackendComponent::MetaBit
        | BackendComponent::MPSBit
        | BackendComponent::HPUBit
        | BackendComponent::PrivateUse1Bit
        | BackendComponent::PrivateUse2Bit
        | BackendComponent::PrivateUse3Bit => {
            DispatchKey::to_runtime_per_backend_functionality_key(
                DispatchKey::AutogradFunctionality,
                b,
            )
        }
        BackendComponent::InvalidBit | BackendComponent::HIPBit | BackendComponent::VEBit => {
            DispatchKey::AutogradOther
        }
    };
    INPLACE_OR_VIEW_KS.add(autograd)
}

/// The autograd key a backend uses (c10 `getAutogradKeyFromBackend`), e.g.
/// `AutogradCPU` for `CPUBit`, `AutogradOther` for `HIPBit`.
///
/// ```
/// use c10_core::dispatch_key::{autograd_key_from_backend, BackendComponent, DispatchKey};
/// assert_eq!(autograd_key_from_backend(BackendComponent::CPUBit), DispatchKey::AutogradCPU);
/// assert_eq!(autograd_key_from_backend(BackendComponent::HIPBit), DispatchKey::AutogradOther);
/// ```
pub const fn autograd_key_from_backend(b: BackendComponent) -> DispatchKey {
    autograd_related_keyset_from_backend(b).highest_priority_type_id()
}

/// The backend's autocast key as a set (c10
/// `getAutocastRelatedKeySetFromBackend`): CPU, MTIA, MAIA, XPU, IPU, HPU,
/// CUDA, XLA, PrivateUse1 and MPS have one; every other backend (Meta, HIP,
/// Lazy, VE, ...) gets the empty set.
///
/// ```
/// use c10_core::dispatch_key::{autocast_related_keyset_from_backend, BackendComponent, DispatchKey, DispatchKeySet};
/// let cuda = autocast_related_keyset_from_backend(BackendComponent::CUDABit);
/// assert_eq!(cuda, DispatchKeySet::from_key(DispatchKey::AutocastCUDA));
/// assert!(autocast_related_keyset_from_backend(BackendComponent::MetaBit).is_empty());
/// ```
pub const fn autocast_related_keyset_from_backend(b: BackendComponent) -> DispatchKeySet {
    let key = match b {
        BackendComponent::CPUBit => DispatchKey::AutocastCPU,
        BackendComponent::MTIABit => DispatchKey::AutocastMTIA,
        BackendComponent::MAIABit => DispatchKey::AutocastMAIA,
        BackendComponent::XPUBit => DispatchKey::AutocastXPU,
        BackendComponent::IPUBit => DispatchKey::AutocastIPU,
        BackendComponent::HPUBit => DispatchKey::AutocastHPU,
        BackendComponent::CUDABit => DispatchKey::AutocastCUDA,
        BackendComponent::XLABit => DispatchKey::AutocastXLA,
        BackendComponent::PrivateUse1Bit => DispatchKey::AutocastPrivateUse1,
        BackendComponent::MPSBit => DispatchKey::AutocastMPS,
        _ => return DispatchKeySet::EMPTY,
    };
    DispatchKeySet::from_key(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use DispatchKey as K;

    fn ks(keys: &[DispatchKey]) -> DispatchKeySet {
        DispatchKeySet::from_keys(keys)
    }

    #[test]
    fn backend_component_numbering() {
        assert_eq!(BackendComponent::InvalidBit as u8, 0);
        assert_eq!(BackendComponent::CPUBit as u8, 1);
        assert_eq!(BackendComponent::CUDABit as u8, 2);
        assert_eq!(BackendComponent::HIPBit as u8, 3);
        assert_eq!(BackendComponent::XLABit as u8, 4);
        assert_eq!(BackendComponent::MPSBit as u8, 5);
        assert_eq!(BackendComponent::IPUBit as u8, 6);
        assert_eq!(BackendComponent::XPUBit as u8, 7);
        assert_eq!(BackendComponent::HPUBit as u8, 8);
        assert_eq!(BackendComponent::VEBit as u8, 9);
        assert_eq!(BackendComponent::LazyBit as u8, 10);
        assert_eq!(BackendComponent::MTIABit as u8, 11);
        assert_eq!(BackendComponent::MAIABit as u8, 12);
        assert_eq!(BackendComponent::PrivateUse1Bit as u8, 13);
        assert_eq!(BackendComponent::PrivateUse2Bit as u8, 14);
        assert_eq!(BackendComponent::PrivateUse3Bit as u8, 15);
        assert_eq!(BackendComponent::MetaBit as u8, 16);
        assert_eq!(BackendComponent::END_OF_BACKEND_KEYS as u8, NUM_BACKENDS);
        assert_eq!(FULL_BACKEND_MASK, 0xFFFF);
        for (i, b) in BackendComponent::ALL.iter().enumerate() {
            assert_eq!(*b as usize, i);
            assert_eq!(BackendComponent::try_from(i as u8), Ok(*b));
        }
        assert_eq!(
            BackendComponent::try_from(17),
            Err(DispatchKeyError::InvalidBackendValue(17))
        );
        assert_eq!(BackendComponent::MTIABit.to_string(), "MTIA");
        assert_eq!(BackendComponent::MetaBit.to_string(), "MetaBit");
    }

    #[test]
    fn dispatch_key_numbering() {
        for (i, k) in DispatchKey::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?}");
            assert_eq!(DispatchKey::try_from(i as u16), Ok(*k));
        }
        assert_eq!(
            DispatchKey::try_from(156),
            Err(DispatchKeyError::InvalidKeyValue(156))
        );
        // Functionality keys (checked against torch._C.DispatchKey in 2.15).
        assert_eq!(K::Undefined as u16, 0);
        assert_eq!(K::Dense as u16, 1);
        assert_eq!(K::Quantized as u16, 5);
        assert_eq!(K::MkldnnCPU as u16, 7);
        assert_eq!(K::NestedTensor as u16, 10);
        assert_eq!(K::BackendSelect as u16, 11);
        assert_eq!(K::Python as u16, 13);
        assert_eq!(K::Functionalize as u16, 15);
        assert_eq!(K::Conjugate as u16, 16);
        assert_eq!(K::ADInplaceOrView as u16, 19);
        assert_eq!(K::AutogradOther as u16, 20);
        assert_eq!(K::AutogradFunctionality as u16, 21);
        assert_eq!(K::Tracer as u16, 23);
        assert_eq!(K::AutocastCPU as u16, 24);
        assert_eq!(K::AutocastCUDA as u16, 32);
        assert_eq!(K::AutocastPrivateUse1 as u16, 33);
        assert_eq!(K::FuncTorchBatched as u16, 34);
        assert_eq!(K::PythonTLSSnapshot as u16, 41);
        assert_eq!(K::PreDispatch as u16, 45);
        assert_eq!(K::PythonDispatcher as u16, 46);
        assert_eq!(K::EndOfFunctionalityKeys as u16, 47);
        assert_eq!(NUM_FUNCTIONALITY_KEYS, 47);
        // Runtime keys.
        assert_eq!(K::StartOfDenseBackends as u16, 48);
        assert_eq!(K::CPU as u16, 49);
        assert_eq!(K::CUDA as u16, 50);
        assert_eq!(K::HIP as u16, 51);
        assert_eq!(K::XLA as u16, 52);
        assert_eq!(K::MPS as u16, 53);
        assert_eq!(K::IPU as u16, 54);
        assert_eq!(K::XPU as u16, 55);
        assert_eq!(K::HPU as u16, 56);
        assert_eq!(K::VE as u16, 57);
        assert_eq!(K::Lazy as u16, 58);
        assert_eq!(K::MTIA as u16, 59);
        assert_eq!(K::MAIA as u16, 60);
        assert_eq!(K::PrivateUse1 as u16, 61);
        assert_eq!(K::PrivateUse2 as u16, 62);
        assert_eq!(K::PrivateUse3 as u16, 63);
        assert_eq!(K::Meta as u16, 64);
        assert_eq!(K::StartOfQuantizedBackends as u16, 65);
        assert_eq!(K::QuantizedCPU as u16, 66);
        assert_eq!(K::QuantizedMeta as u16, 81);
        assert_eq!(K::StartOfSparseBackends as u16, 82);
        assert_eq!(K::SparseCPU as u16, 83);
        assert_eq!(K::SparseMeta as u16, 98);
        assert_eq!(K::StartOfSparseCsrBackends as u16, 99);
        assert_eq!(K::SparseCsrCPU as u16, 100);
        assert_eq!(K::SparseCsrMeta as u16, 115);
        assert_eq!(K::StartOfNestedTensorBackends as u16, 116);
        assert_eq!(K::NestedTensorCPU as u16, 117);
        assert_eq!(K::NestedTensorMeta as u16, 132);
        assert_eq!(K::StartOfAutogradFunctionalityBackends as u16, 133);
        assert_eq!(K::AutogradCPU as u16, 134);
        assert_eq!(K::AutogradMeta as u16, 149);
        assert_eq!(DispatchKey::END_OF_RUNTIME_BACKEND_KEYS as u16, 149);
        // Alias keys.
        assert_eq!(K::Autograd as u16, 150);
        assert_eq!(K::CompositeImplicitAutograd as u16, 151);
        assert_eq!(K::FuncTorchBatchedDecomposition as u16, 152);
        assert_eq!(K::CompositeImplicitAutogradNestedTensor as u16, 153);
        assert_eq!(K::CompositeExplicitAutograd as u16, 154);
        assert_eq!(K::CompositeExplicitAutogradNonFunctional as u16, 155);
        assert_eq!(NUM_RUNTIME_ENTRIES, 137);
    }

    #[test]
    fn dispatch_key_names() {
        assert_eq!(K::CPU.name(), "CPU");
        assert_eq!(K::AutogradCPU.name(), "AutogradCPU");
        assert_eq!(K::QuantizedCPU.name(), "QuantizedCPU");
        assert_eq!(K::SparseCsrMeta.name(), "SparseCsrMeta");
        assert_eq!(K::NestedTensorPrivateUse1.name(), "NestedTensorPrivateUse1");
        assert_eq!(K::ADInplaceOrView.to_string(), "ADInplaceOrView");
        assert_eq!(
            K::TESTING_ONLY_GenericMode.name(),
            "TESTING_ONLY_GenericMode"
        );
        assert_eq!(K::StartOfDenseBackends.name(), "Undefined");
        assert_eq!(
            K::StartOfAutogradFunctionalityBackends.name(),
            "AutogradUndefined"
        );
        assert_eq!(K::EndOfFunctionalityKeys.name(), "UnknownUnknown");
        assert_eq!(
            K::CompositeExplicitAutograd.name(),
            "CompositeExplicitAutograd"
        );
        // Every non-sentinel name parses back to its key.
        for k in DispatchKey::ALL {
            if !k.is_sentinel() {
                assert_eq!(k.name().parse::<DispatchKey>(), Ok(k));
            }
        }
        assert_eq!(
            "NotAKey".parse::<DispatchKey>(),
            Err(DispatchKeyError::UnknownKeyName("NotAKey".into()))
        );
        assert_eq!(
            DispatchKeyError::UnknownKeyName("x".into()).to_string(),
            "could not parse dispatch key: x"
        );
    }

    #[test]
    fn key_helpers() {
        assert_eq!(K::CPU.to_backend_component(), BackendComponent::CPUBit);
        assert_eq!(
            K::AutogradMeta.to_backend_component(),
            BackendComponent::MetaBit
        );
        assert_eq!(
            K::StartOfSparseBackends.to_backend_component(),
            BackendComponent::InvalidBit
        );
        assert_eq!(
            K::AutocastCPU.to_backend_component(),
            BackendComponent::InvalidBit
        );
        assert_eq!(
            K::Autograd.to_backend_component(),
            BackendComponent::InvalidBit
        );
        assert_eq!(K::Meta.to_functionality_key(), K::Dense);
        assert_eq!(K::QuantizedXPU.to_functionality_key(), K::Quantized);
        assert_eq!(K::SparseCsrCPU.to_functionality_key(), K::SparseCsr);
        assert_eq!(K::NestedTensorCUDA.to_functionality_key(), K::NestedTensor);
        assert_eq!(K::Autograd.to_functionality_key(), K::Undefined);
        assert_eq!(K::Conjugate.to_functionality_key(), K::Conjugate);
        assert!(K::Autograd.is_alias());
        assert!(!K::AutogradMeta.is_alias());
        assert!(K::Dense.is_per_backend_functionality_key());
        assert!(!K::CPU.is_per_backend_functionality_key());
        // Runtime key round trip for every block and backend.
        for k in DispatchKey::ALL {
            let (f, b) = (k.to_functionality_key(), k.to_backend_component());
            if k as u16 > 47 && k as u16 <= 149 {
                assert_eq!(
                    DispatchKey::to_runtime_per_backend_functionality_key(f, b),
                    k
                );
            }
        }
        assert_eq!(
            DispatchKey::to_runtime_per_backend_functionality_key(
                K::Conjugate,
                BackendComponent::CPUBit
            ),
            K::Undefined
        );
    }

    #[test]
    fn verified_raw_values() {
        assert_eq!(DispatchKeySet::from_key(K::CPU).raw(), 0x10001);
        assert_eq!(DispatchKeySet::from_key(K::Meta).raw(), 0x18000);
        assert_eq!(
            DispatchKeySet::from_key(K::AutogradCPU).raw(),
            0x10_0000_0001
        );
        assert_eq!(
            DispatchKeySet::from_key(K::AutogradMeta).raw(),
            0x10_0000_8000
        );
        assert_eq!(
            DispatchKeySet::from_key(K::ADInplaceOrView).raw(),
            0x4_0000_0000
        );
        assert_eq!(
            DispatchKeySet::from_key(K::AutocastCPU).raw(),
            0x80_0000_0000
        );
        assert_eq!(
            DispatchKeySet::from_key(K::PythonDispatcher).raw(),
            0x2000_0000_0000_0000
        );
        assert_eq!(DispatchKeySet::from_key(K::Conjugate).raw(), 0x8000_0000);
        // Backend bit b-1, functionality bit 15+k.
        for b in BackendComponent::ALL.iter().skip(1) {
            assert_eq!(DispatchKeySet::from_backend(*b).raw(), 1 << (*b as u8 - 1));
        }
        assert_eq!(DispatchKeySet::from_key(K::Dense).raw(), 1 << 16);
        assert_eq!(
            DispatchKeySet::from_key(K::AutogradFunctionality).raw(),
            1 << 36
        );
        // Undefined, alias keys and InvalidBit are empty; StartOf markers
        // carry only their functionality bit.
        assert!(DispatchKeySet::from_key(K::Undefined).is_empty());
        assert!(DispatchKeySet::from_key(K::CompositeImplicitAutograd).is_empty());
        assert!(DispatchKeySet::from_backend(BackendComponent::InvalidBit).is_empty());
        assert_eq!(
            DispatchKeySet::from_key(K::StartOfDenseBackends).raw(),
            1 << 16
        );
    }

    #[test]
    fn full_and_full_after() {
        assert_eq!(DispatchKeySet::FULL.raw(), (1u64 << 62) - 1);
        let after = DispatchKeySet::full_after(K::AutogradOther);
        assert_eq!(after.raw(), ((1u64 << 35) - 1) | (1 << 61));
        assert_eq!(after, AFTER_AUTOGRAD_KEYSET);
        // A runtime key's full_after uses its functionality.
        assert_eq!(
            DispatchKeySet::full_after(K::AutogradCPU),
            DispatchKeySet::full_after(K::AutogradFunctionality)
        );
        assert!(!AFTER_FUNC_KEYSET.has(K::ADInplaceOrView));
        assert!(!AFTER_FUNC_KEYSET.has(K::Functionalize));
        assert!(!AFTER_FUNC_KEYSET.has(K::Conjugate));
        assert!(AFTER_FUNC_KEYSET.has(K::CPU));
        assert!(AFTER_FUNC_KEYSET.has(K::PythonDispatcher));
    }

    #[test]
    fn fresh_tensor_key_sets() {
        let cpu = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::CPU), false);
        assert_eq!(cpu.raw(), 0x94_0001_0001);
        assert_eq!(
            cpu.to_string(),
            "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
        );
        assert_eq!(
            format!("{cpu:?}"),
            "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
        );
        assert_eq!(cpu.highest_priority_type_id(), K::AutocastCPU);
        assert_eq!(cpu.legacy_extract_dispatch_key(), K::CPU);
        assert_eq!(cpu.highest_priority_backend_type_id(), K::CPU);
        assert!(!cpu.is_inference());

        let conj = cpu.add(K::Conjugate);
        assert_eq!(conj.raw(), 0x94_8001_0001);

        let inference = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::CPU), true);
        assert_eq!(inference.raw(), 0x80_0001_0001);
        assert_eq!(inference.to_string(), "DispatchKeySet(CPU, AutocastCPU)");
        assert!(inference.is_inference());

        let meta = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::Meta), false);
        assert_eq!(
            meta.to_string(),
            "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"
        );
        assert_eq!(meta.raw(), 0x10_0001_8000 | 0x4_0000_0000);

        let sparse = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::SparseCPU), false);
        assert_eq!(
            sparse.to_string(),
            "DispatchKeySet(SparseCPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
        );
        let quantized =
            DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::QuantizedCPU), false);
        assert_eq!(
            quantized.to_string(),
            "DispatchKeySet(QuantizedCPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
        );

        // Backends without a dedicated autograd key get AutogradOther.
        let hip = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::HIP), false);
        assert_eq!(
            hip.to_string(),
            "DispatchKeySet(HIP, ADInplaceOrView, AutogradOther)"
        );
        let ve = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::VE), false);
        assert!(ve.has(K::AutogradOther));
        let fpga = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::FPGA), false);
        assert_eq!(
            fpga.to_string(),
            "DispatchKeySet(FPGA, ADInplaceOrView, AutogradOther)"
        );

        let cuda = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::CUDA), false);
        assert_eq!(
            cuda.to_string(),
            "DispatchKeySet(CUDA, ADInplaceOrView, AutogradCUDA, AutocastCUDA)"
        );

        // Python keys passed by the factory are dropped.
        let py =
            DispatchKeySet::for_new_tensor(ks(&[K::CPU, K::Python, K::PythonTLSSnapshot]), false);
        assert_eq!(py, cpu);
    }

    #[test]
    fn remove_never_clears_backend_bits() {
        let s = ks(&[K::CPU, K::CUDA]);
        assert_eq!(s.raw(), 0x10003);
        assert_eq!(s.highest_priority_type_id(), K::CUDA);
        assert_eq!(s.highest_backend_key(), BackendComponent::CUDABit);
        let r = s.remove(K::CUDA);
        assert_eq!(r.raw(), 0x3);
        assert_eq!(r.to_string(), "DispatchKeySet()");
        assert!(!r.is_empty());
        assert_eq!(s - DispatchKeySet::from_key(K::CUDA), r);
        let mut m = s;
        m -= DispatchKeySet::from_key(K::CPU);
        assert_eq!(m, r);
        assert_eq!(s.remove_backend(BackendComponent::CUDABit).raw(), 0x10001);
        assert_eq!(DispatchKeySet::EMPTY.to_string(), "DispatchKeySet()");
    }

    #[test]
    fn has_semantics() {
        let s = ks(&[K::CPU, K::AutogradCUDA]);
        // Cross product: all four runtime keys are "in" the set.
        assert!(s.has(K::CPU) && s.has(K::CUDA) && s.has(K::AutogradCPU) && s.has(K::AutogradCUDA));
        assert!(!s.has(K::Meta));
        assert!(s.has_backend(BackendComponent::CUDABit));
        assert!(!s.has_backend(BackendComponent::MetaBit));
        assert!(s.has_any(AUTOGRAD_DISPATCH_KEYSET));
        assert!(!s.has_any(AUTOCAST_DISPATCH_KEYSET));
        assert!(s.has_all(ks(&[K::Dense, K::AutogradFunctionality])));
        assert!(s.has(K::Undefined));
    }

    #[test]
    fn operators() {
        let a = ks(&[K::CPU, K::Conjugate]);
        let b = ks(&[K::CPU, K::Negative]);
        assert_eq!((a | b).raw(), a.raw() | b.raw());
        assert_eq!((a & b).raw(), 0x10001);
        assert_eq!((a ^ b).raw(), a.raw() ^ b.raw());
        let mut c = a;
        c |= b;
        c &= a;
        assert_eq!(c, a);
        c ^= a;
        assert!(c.is_empty());
        let collected: DispatchKeySet = [K::CPU, K::AutogradCPU].into_iter().collect();
        assert_eq!(collected.raw(), 0x10_0001_0001);
        assert_eq!(DispatchKeySet::from(K::Meta).raw(), 0x18000);
        assert_eq!(DispatchKeySet::from(BackendComponent::CPUBit).raw(), 1);
        assert_eq!(DispatchKeySet::from_raw(0x1234).raw(), 0x1234);
        assert_eq!(DispatchKeySet::default(), DispatchKeySet::EMPTY);
        assert_eq!(
            DispatchKeySet::from_backends(&[BackendComponent::CPUBit, BackendComponent::MetaBit])
                .raw(),
            0x8001
        );
        assert_eq!(
            DispatchKeySet::EMPTY
                .add_backend(BackendComponent::CUDABit)
                .raw(),
            2
        );
    }

    #[test]
    fn highest_keys() {
        assert_eq!(
            DispatchKeySet::EMPTY.highest_functionality_key(),
            K::Undefined
        );
        assert_eq!(
            DispatchKeySet::EMPTY.highest_backend_key(),
            BackendComponent::InvalidBit
        );
        assert_eq!(
            DispatchKeySet::EMPTY.highest_priority_type_id(),
            K::Undefined
        );
        assert_eq!(DispatchKeySet::EMPTY.index_of_highest_bit(), 0);
        // Backend bits only: no functionality.
        assert_eq!(
            DispatchKeySet::from_raw(0x3).highest_priority_type_id(),
            K::Undefined
        );
        // Dense without a backend: the StartOfDenseBackends marker.
        assert_eq!(
            DispatchKeySet::from_key(K::Dense).highest_priority_type_id(),
            K::StartOfDenseBackends
        );
        let s = ks(&[K::Meta, K::CPU, K::AutogradMeta]);
        assert_eq!(s.highest_functionality_key(), K::AutogradFunctionality);
        assert_eq!(s.highest_backend_key(), BackendComponent::MetaBit);
        assert_eq!(s.highest_priority_type_id(), K::AutogradMeta);
        assert_eq!(
            DispatchKeySet::FULL.highest_priority_type_id(),
            K::PythonDispatcher
        );
        // Bits outside FULL never panic.
        assert_eq!(
            DispatchKeySet::from_raw(u64::MAX).highest_functionality_key(),
            K::StartOfDenseBackends
        );
        assert_eq!(
            DispatchKeySet::from_raw(u64::MAX).iter().count(),
            6 * 16 + 42
        );
    }

    #[test]
    fn iteration_order() {
        let s = ks(&[
            K::AutogradCUDA,
            K::CPU,
            K::Conjugate,
            K::AutocastCPU,
            K::ADInplaceOrView,
            K::Python,
        ]);
        let keys: Vec<_> = s.iter().collect();
        assert_eq!(
            keys,
            [
                K::CPU,
                K::CUDA,
                K::Python,
                K::Conjugate,
                K::ADInplaceOrView,
                K::AutogradCPU,
                K::AutogradCUDA,
                K::AutocastCPU
            ]
        );
        // Per-backend functionality bits without backend bits yield nothing.
        assert_eq!(ks(&[K::Dense, K::Sparse]).iter().count(), 0);
        // FULL: 40 plain functionality keys + 6 per-backend blocks of 16.
        assert_eq!(DispatchKeySet::FULL.iter().count(), 40 + 6 * 16);
        // Every key yielded is contained in the set and printing matches.
        let full: Vec<_> = DispatchKeySet::FULL.into_iter().collect();
        assert!(full.iter().all(|k| DispatchKeySet::FULL.has(*k)));
        assert!(full
            .windows(2)
            .all(|w| w[0].to_functionality_key() <= w[1].to_functionality_key()));
        let mut it = DispatchKeySet::from_key(K::CPU).iter();
        assert_eq!(it.next(), Some(K::CPU));
        assert_eq!(it.next(), None);
        assert_eq!(it.next(), None);
    }

    #[test]
    fn named_sets() {
        assert_eq!(
            AUTOGRAD_DISPATCH_KEYSET,
            ks(&[
                K::AutogradFunctionality,
                K::AutogradOther,
                K::AutogradNestedTensor
            ])
        );
        assert_eq!(AUTOGRAD_DISPATCH_KEYSET.raw() & FULL_BACKEND_MASK, 0);
        assert_eq!(
            AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW,
            AUTOGRAD_DISPATCH_KEYSET | INPLACE_OR_VIEW_KS
        );
        assert_eq!(AUTOCAST_DISPATCH_KEYSET.iter().count(), 10);
        assert_eq!(AUTOCAST_DISPATCH_KEYSET.raw(), ((1u64 << 10) - 1) << 39);
        assert_eq!(DEFAULT_EXCLUDED_SET, AUTOCAST_DISPATCH_KEYSET);
        assert_eq!(
            DEFAULT_INCLUDED_SET.to_string(),
            "DispatchKeySet(BackendSelect, ADInplaceOrView)"
        );
        assert_eq!(
            PYTHON_KS.to_string(),
            "DispatchKeySet(Python, PythonTLSSnapshot)"
        );
        assert_eq!(
            BACKEND_FUNCTIONALITY_KEYS.raw() & FULL_BACKEND_MASK,
            FULL_BACKEND_MASK
        );
        assert!(BACKEND_FUNCTIONALITY_KEYS.has(K::SparseCsrCUDA));
        assert!(!BACKEND_FUNCTIONALITY_KEYS.has(K::NestedTensorCPU));
        assert!(AUTOGRADOTHER_BACKENDS.has(K::FPGA) && AUTOGRADOTHER_BACKENDS.has(K::SparseCPU));
        assert_eq!(FUNCTORCH_TRANSFORMS_KS.iter().count(), 5);
        assert_eq!(BACKEND_BITSET_MASK.raw(), 0xFFFF);
        assert_eq!(SPARSE_KS.raw(), 1 << 23);
        assert_eq!(SPARSE_CSR_KS.raw(), 1 << 24);
        assert_eq!(MKLDNN_KS.raw(), 1 << 22);
        assert_eq!(FUNCTORCH_BATCHED_KS.raw(), 1 << 49);
    }

    #[test]
    fn backend_related_sets() {
        use BackendComponent as B;
        let with_autograd = [
            (B::CPUBit, K::AutogradCPU),
            (B::IPUBit, K::AutogradIPU),
            (B::MTIABit, K::AutogradMTIA),
            (B::MAIABit, K::AutogradMAIA),
            (B::XPUBit, K::AutogradXPU),
            (B::CUDABit, K::AutogradCUDA),
            (B::XLABit, K::AutogradXLA),
            (B::LazyBit, K::AutogradLazy),
            (B::MetaBit, K::AutogradMeta),
            (B::MPSBit, K::AutogradMPS),
            (B::HPUBit, K::AutogradHPU),
            (B::PrivateUse1Bit, K::AutogradPrivateUse1),
            (B::PrivateUse2Bit, K::AutogradPrivateUse2),
            (B::PrivateUse3Bit, K::AutogradPrivateUse3),
            (B::HIPBit, K::AutogradOther),
            (B::VEBit, K::AutogradOther),
            (B::InvalidBit, K::AutogradOther),
        ];
        for (b, k) in with_autograd {
            assert_eq!(
                autograd_related_keyset_from_backend(b),
                ks(&[K::ADInplaceOrView, k]),
                "{b:?}"
            );
            assert_eq!(autograd_key_from_backend(b), k);
        }
        let autocast = [
            (B::CPUBit, Some(K::AutocastCPU)),
            (B::MTIABit, Some(K::AutocastMTIA)),
            (B::MAIABit, Some(K::AutocastMAIA)),
            (B::XPUBit, Some(K::AutocastXPU)),
            (B::IPUBit, Some(K::AutocastIPU)),
            (B::HPUBit, Some(K::AutocastHPU)),
            (B::CUDABit, Some(K::AutocastCUDA)),
            (B::XLABit, Some(K::AutocastXLA)),
            (B::PrivateUse1Bit, Some(K::AutocastPrivateUse1)),
            (B::MPSBit, Some(K::AutocastMPS)),
            (B::MetaBit, None),
            (B::HIPBit, None),
            (B::LazyBit, None),
            (B::VEBit, None),
            (B::PrivateUse2Bit, None),
            (B::InvalidBit, None),
        ];
        for (b, k) in autocast {
            let expected = k.map_or(DispatchKeySet::EMPTY, DispatchKeySet::from_key);
            assert_eq!(autocast_related_keyset_from_backend(b), expected, "{b:?}");
        }
    }

    #[test]
    fn device_type_mapping() {
        use BackendComponent as B;
        let table = [
            (0, B::CPUBit),
            (1, B::CUDABit),
            (2, B::InvalidBit),
            (3, B::InvalidBit),
            (4, B::InvalidBit),
            (5, B::InvalidBit),
            (6, B::HIPBit),
            (7, B::InvalidBit),
            (8, B::MAIABit),
            (9, B::XLABit),
            (10, B::InvalidBit),
            (11, B::InvalidBit),
            (12, B::XPUBit),
            (13, B::MPSBit),
            (14, B::MetaBit),
            (15, B::HPUBit),
            (16, B::VEBit),
            (17, B::LazyBit),
            (18, B::IPUBit),
            (19, B::MTIABit),
            (20, B::PrivateUse1Bit),
            (21, B::InvalidBit),
            (-1, B::InvalidBit),
        ];
        for (d, b) in table {
            assert_eq!(backend_component_for_device_type(d), b, "device type {d}");
        }
    }

    #[test]
    fn dense_backend_sets() {
        for b in BackendComponent::ALL.iter().skip(1) {
            let s = DispatchKeySet::dense_backend(*b);
            assert_eq!(s.raw(), (1 << 16) | (1 << (*b as u8 - 1)));
            assert_eq!(s.highest_priority_type_id().to_backend_component(), *b);
        }
        let invalid = DispatchKeySet::dense_backend(BackendComponent::InvalidBit);
        assert_eq!(invalid.raw(), 1 << 16);
        let fresh = DispatchKeySet::for_new_tensor(invalid, false);
        assert_eq!(fresh, ks(&[K::Dense, K::ADInplaceOrView, K::AutogradOther]));
    }

    #[test]
    fn change_backend() {
        let cpu = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::CPU), false);
        let cuda = DispatchKeySet::for_new_tensor(DispatchKeySet::from_key(K::CUDA), false);
        assert_eq!(
            cpu.change_backend_component_keys(BackendComponent::CUDABit),
            cuda
        );
        let meta = cpu.change_backend_component_keys(BackendComponent::MetaBit);
        assert_eq!(
            meta.to_string(),
            "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"
        );
    }
}
