! pioscope.f90: user regions for Fortran programs traced by pioscope (the C API of pioscope.h).
!
!     use pioscope
!     call pioscope_region_begin("checkpoint")
!     ... I/O ...
!     call pioscope_region_end()
!
! Build with -I<build>/include and link <build>/lib/libpioscope_fortran.a (this module and a
! small C shim). The calls do nothing unless libpioscope.so is preloaded.
module pioscope
  use iso_c_binding, only: c_char, c_int
  implicit none
  private
  public :: pioscope_region_begin, pioscope_region_end

  interface
    subroutine shim_region_begin(name, length) bind(C, name="pioscope_fortran_region_begin")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int), value :: length
    end subroutine shim_region_begin

    subroutine shim_region_end() bind(C, name="pioscope_fortran_region_end")
    end subroutine shim_region_end
  end interface

contains

  subroutine pioscope_region_begin(name)
    character(len=*), intent(in) :: name
    call shim_region_begin(name, int(len_trim(name), c_int))
  end subroutine pioscope_region_begin

  subroutine pioscope_region_end()
    call shim_region_end()
  end subroutine pioscope_region_end

end module pioscope
