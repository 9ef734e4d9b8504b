//! `TensorOptions` and `MemoryFormat`.

use c10_storage::Device;

use crate::scalar_type::ScalarType;

/// c10's `MemoryFormat`: how a 4-d or 5-d tensor's dims are laid out.
///
/// ```
/// use c10_core::{MemoryFormat, Tensor, TensorOptions};
/// assert_eq!(MemoryFormat::default(), MemoryFormat::Contiguous);
/// assert_eq!(MemoryFormat::ChannelsLast.to_string(), "ChannelsLast");
/// let nhwc = Tensor::empty(&[1, 3, 4, 4], TensorOptions::new().memory_format(MemoryFormat::ChannelsLast))?;
/// assert_eq!(nhwc.strides(), &[48, 1, 12, 3]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
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
    ///
    /// ```
    /// use c10_core::{Device, TensorOptions};
    /// let o = TensorOptions::new();
    /// assert_eq!((o.dtype, o.device, o.requires_grad), (None, Device::CPU, false));
    /// ```
    pub fn new() -> TensorOptions {
        TensorOptions::default()
    }

    /// With this dtype.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2], TensorOptions::new().dtype(ScalarType::Int))?;
    /// assert_eq!(t.dtype(), ScalarType::Int);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn dtype(mut self, dtype: ScalarType) -> TensorOptions {
        self.dtype = Some(dtype);
        self
    }

    /// The dtype, or `float32` when none was given (c10's
    /// `dtype_or_default`, with the default dtype fixed at `float32`).
    ///
    /// ```
    /// use c10_core::{ScalarType, TensorOptions};
    /// assert_eq!(TensorOptions::new().dtype_or_default(), ScalarType::Float);
    /// assert_eq!(TensorOptions::new().dtype(ScalarType::Bool).dtype_or_default(), ScalarType::Bool);
    /// ```
    pub fn dtype_or_default(&self) -> ScalarType {
        self.dtype.unwrap_or(ScalarType::Float)
    }

    /// With this device.
    ///
    /// ```
    /// use c10_core::{Device, Tensor, TensorOptions};
    /// let t = Tensor::empty(&[3], TensorOptions::new().device(Device::CPU))?;
    /// assert_eq!(t.device(), Device::CPU);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn device(mut self, device: Device) -> TensorOptions {
        self.device = device;
        self
    }

    /// With `requires_grad`.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let w = Tensor::ones(&[2], TensorOptions::new().requires_grad(true))?;
    /// assert!(w.requires_grad() && w.is_leaf());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn requires_grad(mut self, requires_grad: bool) -> TensorOptions {
        self.requires_grad = requires_grad;
        self
    }

    /// With this memory format.
    ///
    /// ```
    /// use c10_core::{MemoryFormat, Tensor, TensorOptions};
    /// let o = TensorOptions::new().memory_format(MemoryFormat::ChannelsLast);
    /// let t = Tensor::empty(&[2, 3, 4, 5], o)?;
    /// assert!(t.is_contiguous_in(MemoryFormat::ChannelsLast));
    /// assert!(!t.is_contiguous());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
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
