//! Halogen pipelines compiled ahead of time: `build.rs` defines and schedules them and
//! compiles them with [`halogen::build::Generator`]; this crate includes the typed wrappers
//! it writes. Running them needs no C compiler and no JIT.
//!
//! The crate denies `unsafe_code` and `missing_docs`: the wrappers allow the one unsafe
//! call they make and document themselves.
//!
//! ```
//! use halogen::Buffer;
//! let input = Buffer::<u16>::from_fn(&[10, 10], |c| (c[0] * 100 + c[1]) as u16);
//! let mut out = Buffer::<u16>::new(&[8, 8]);
//! halogen_aot_example::blur::blur_u16(&input, &mut out).unwrap();
//! assert_eq!(out[[0, 0]], 101);
//! ```

#![deny(missing_docs, unsafe_code)]

pub mod blur {
    //! The Halide paper's 3×3 separable box blur of `u16` pixels, tiled, vectorized and
    //! parallel. No boundary condition: output `(x, y)` reads input `x..=x+2, y..=y+2`, so
    //! the input must be 2 pixels wider and taller than the output region (and start at
    //! its mins); sums wrap and each pass divides by 3, rounding down.
    //!
    //! ```
    //! use halogen::Buffer;
    //! use halogen_aot_example::blur::blur_u16;
    //! let input = Buffer::<u16>::from_fn(&[66, 34], |c| (c[0] + c[1]) as u16);
    //! let mut out = Buffer::<u16>::new(&[64, 32]);
    //! blur_u16(&input, &mut out).unwrap();
    //! // The mean of a linear ramp over a 3×3 window is its value at the window's centre.
    //! assert_eq!(out[[10, 20]], 11 + 21);
    //!
    //! // An input too small for the output is an error naming it, not a read past its end.
    //! let small = Buffer::<u16>::new(&[64, 32]);
    //! let e = blur_u16(&small, &mut out).unwrap_err();
    //! assert!(e.to_string().contains("input"));
    //! ```

    include!(concat!(env!("OUT_DIR"), "/blur_u16.rs"));
}

pub mod brighten {
    //! A brightness and contrast change: `u16(clamp(f32(input) * gain + f32(bias), 0,
    //! 65535))`, the cast truncating toward zero; vectorized and parallel over rows.
    //!
    //! ```
    //! use halogen::Buffer;
    //! use halogen_aot_example::brighten::brighten_u16;
    //! let input = Buffer::from_vec(vec![0u16, 100, 1000, 60000], &[2, 2]).unwrap();
    //! let mut out = Buffer::<u16>::new(&[2, 2]);
    //! brighten_u16(&input, -50, 1.5, &mut out).unwrap();
    //! assert_eq!(out.as_slice(), &[0, 100, 1450, 65535]);
    //! ```

    include!(concat!(env!("OUT_DIR"), "/brighten_u16.rs"));
}
