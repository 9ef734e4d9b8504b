//! `TensorOptions` and `MemoryFormat`.

use c10_storage::Device;

use crate::scalar_type::ScalarType;

/// c10's `MemoryFormat`: how a 4-d or 5-d tensor's dims are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemoryFormat {
    /// Row-major (NCHW).
    #[default]
    Contiguous,
    /// Keep the input's layout (`clone`, `empty_like`).
    Preserve,
    /// NHWC for 4-d tensors.
    ChannelsLast,
    /// NDHWC for 5-d tensors.
    ChannelsLast3d,
}

impl std::fmt::Display for MemoryFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MemoryFormat::Contiguous => "Contiguous",
            MemoryFormat::Preserve => "Preserve",
            MemoryFormat::ChannelsLast => "ChannelsLast",
            MemoryFormat::ChannelsLast3d => "ChannelsLast3d",
        })
    }
}

/// What a factory makes: dtype, device, `requires_grad`, memory format
/// (c10's `TensorOptions`). The default is a `float32` CPU tensor.
///
/// ```
/// use c10_core::{TensorOptions, ScalarType, Device};
/// let o = TensorOptions::new().dtype(ScalarType::Long).device(Device::CPU);
/// assert_eq!(o.dtype, Some(ScalarType::Long));
/// assert_eq!(TensorOptions::new().dtype_or_default(), ScalarType::Float);
/// let o: TensorOptions = ScalarType::Half.into();
/// assert_eq!(o.device, Device::CPU);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorOptions {
    /// Element type; `None` (the default) lets the factory choose, as in
    /// PyTorch: `float32` for most, the fill value's kind for `full` and
    /// `scalar_tensor` (`int64` for an integer, `bool` for a bool), the
    /// arguments' kind for `arange`.
    pub dtype: Option<ScalarType>,
    /// Device.
    pub device: Device,
    /// Whether the new tensor requires gradients.
    pub requires_grad: bool,
    /// Layout of `empty`-style factories.
    pub memory_format: MemoryFormat,
}

impl Default for TensorOptions {
    fn default() -> Self {
        TensorOptions {
            dtype: None,
            device: Device::CPU,
            requires_grad: false,
            memory_format: MemoryFormat::Contiguous,
        }
    }
}

impl TensorOptions {
    /// The defaults (`float32`, CPU).
    pub fn new() -> TensorOptions {
        TensorOptions::default()
    }

    /// With this dtype.
    pub fn dtype(mut self, dtype: ScalarType) -> TensorOptions {
        self.dtype = Some(dtype);
        self
    }

    /// The dtype, or `float32` when none was given (c10's
    /// `dtype_or_default`, with the default dtype fixed at `float32`).
    pub fn dtype_or_default(&self) -> ScalarType {
        self.dtype.unwrap_or(ScalarType::Float)
    }

    /// With this device.
    pub fn device(mut self, device: Device) -> TensorOptions {
        self.device = device;
        self
    }

    /// With `requires_grad`.
    pub fn requires_grad(mut self, requires_grad: bool) -> TensorOptions {
        self.requires_grad = requires_grad;
        self
    }

    /// With this memory format.
    pub fn memory_format(mut self, memory_format: MemoryFormat) -> TensorOptions {
        self.memory_format = memory_format;
        self
    }
}

impl From<ScalarType> for TensorOptions {
    fn from(dtype: ScalarType) -> Self {
        TensorOptions::new().dtype(dtype)
    }
}

impl From<Device> for TensorOptions {
    fn from(device: Device) -> Self {
        TensorOptions::new().device(device)
    }
}

impl From<(ScalarType, Device)> for TensorOptions {
    fn from((dtype, device): (ScalarType, Device)) -> Self {
        TensorOptions::new().dtype(dtype).device(device)
    }
}
